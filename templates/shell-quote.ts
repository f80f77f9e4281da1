// POSIX shell quoting for dry-run output and error messages: what is printed can
// be pasted into `sh` and runs the same argv. Control characters are never
// printed raw (a hostile file name must not drive the user's terminal); they are
// spelled as "$(printf '\ooo')", which is POSIX. A newline stays literal inside
// single quotes, since command substitution would strip it.

const SAFE = /^[A-Za-z0-9_\/.,:=@%+^-]+$/;
// C0 controls except newline, DEL, and C1 controls.
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

export function shellQuote(value: string): string {
  if (value !== '' && SAFE.test(value)) return value;
  let out = "'";
  for (const ch of value) {
    if (ch === "'") {
      out += "'\\''";
    } else if (CONTROL.test(ch)) {
      out += `'"$(printf '${octalBytes(ch)}')"'`;
    } else {
      out += ch;
    }
  }
  out += "'";
  // Drop empty '' pairs left around printf escapes ('' + "..." + '').
  return out.replace(/^''(?=.)/, '').replace(/(?<=.)''$/, '') || "''";
}

function octalBytes(ch: string): string {
  return [...Buffer.from(ch, 'utf8')].map((b) => '\\' + b.toString(8).padStart(3, '0')).join('');
}
