// What stashbase says on a terminal the agent had: nothing it writes while the
// agent holds the terminal (with `tostop` set) may stop it, whichever path
// writes it, and what it says after is seen as written, whatever state the
// agent left the terminal's rendering in. Rendered by a real terminal emulator
// (xterm.js, headless).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import xterm from '@xterm/headless';
import { renderingReset } from '../../lib/util/terminal.js';
import { shellQuote } from '../../templates/shell-quote.js';
import { LeafCache } from '../../lib/tls/leaves.js';
import { BIN, needs, REPO } from '../helpers.js';
import { attackHome, PTY } from '../native-setup.js';
import { testCa } from '../upstream-ca.js';

const TIOCSPGRP = '0x5410';
/** A stand-in for an agent in a group of its own: takes the terminal, sets tostop, stays a while. */
const GRAB = `setpgrp(0,0); $SIG{TTOU}="IGNORE"; open(T,"+<","/dev/tty") or die "tty: $!"; ioctl(T,${TIOCSPGRP},pack("i",getpgrp(0))) or die "pgrp: $!"; system("stty tostop </dev/tty"); print STDERR "agent: holds the terminal\\n"; sleep 2;`;

/**
 * The command as a job of an interactive shell on a fresh terminal, as you would start it: its group is not orphaned
 * (a write of an orphaned group's fails with EIO instead of stopping it). `exit` is the job's status as the shell saw
 * it (128 + 22 when SIGTTOU stopped it), null when it did not end in time.
 */
async function ptyRun(cmd: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeout?: number; keys?: Array<[string, number, string]> } = {}): Promise<{ output: string; exit: number | null }> {
  const line = `${cmd.map(shellQuote).join(' ')}; echo EXIT=$?; stty -tostop`;
  // Keys typed once a text has appeared, that many seconds later.
  const timeline = (opts.keys ?? []).flatMap(([text, after, keys]) => ['--at', '0', `wait:${text}`, '--at', String(after), `send:${Buffer.from(keys).toString('hex')}`]);
  // Not spawnSync: the upstream a run dials lives in this process.
  const child = spawn('python3', [PTY, '--size', '24', '200', '--timeout', String(opts.timeout ?? 60), ...timeline, '--', 'bash', '--norc', '-i', '-c', line], { env: { ...(opts.env ?? process.env), PS1: '' }, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  await new Promise((r) => child.on('close', r));
  const output = (JSON.parse(stdout) as { output: string }).output;
  const exit = /EXIT=(\d+)\r\n/.exec(output);
  return { output, exit: exit ? Number(exit[1]) : null };
}

/** The screen a real terminal shows for these bytes: each row's text, and whether any cell of the row's text is hidden. */
async function render(bytes: string): Promise<Array<{ text: string; hidden: boolean }>> {
  const term = new xterm.Terminal({ cols: 200, rows: 60, allowProposedApi: true, scrollback: 1000 });
  await new Promise<void>((r) => term.write(bytes, r));
  const buf = term.buffer.active;
  const rows: Array<{ text: string; hidden: boolean }> = [];
  for (let y = 0; y < buf.length; y++) {
    const line = buf.getLine(y)!;
    const text = line.translateToString(true);
    let hidden = false;
    for (let x = 0; x < text.length; x++) if (line.getCell(x)?.isInvisible()) hidden = true;
    rows.push({ text, hidden });
  }
  term.dispose();
  return rows;
}

/** The input modes a real terminal is left in by these bytes (what makes it send input of its own). */
async function inputModes(bytes: string): Promise<{ mouse: string; focus: boolean; cursorKeys: boolean }> {
  const term = new xterm.Terminal({ cols: 200, rows: 60, allowProposedApi: true });
  await new Promise<void>((r) => term.write(bytes, r));
  const m = term.modes;
  const out = { mouse: m.mouseTrackingMode, focus: m.sendFocusMode, cursorKeys: m.applicationCursorKeysMode };
  term.dispose();
  return out;
}

/** A test's own home and project (a repository), removed after it. */
async function inHome(body: (a: ReturnType<typeof attackHome>) => Promise<void>): Promise<void> {
  const a = attackHome();
  try {
    spawnSync('git', ['init', '-q', a.proj]);
    await body(a);
  } finally {
    a.cleanup();
  }
}

describe("stashbase's words on a terminal the agent had", () => {
  test("(review, round 36) Node's own warning and a console line during the agent's hold with tostop are held back: the process is not stopped; control: without the hold it is stopped at them", async () => {
    const child = (hold: boolean) => `
      const { holdTerminalWrites } = await import(${JSON.stringify(join(REPO, 'dist', 'lib', 'util', 'terminal.js'))});
      const { spawn, spawnSync } = await import('node:child_process');
      const agent = spawn('perl', ['-e', ${JSON.stringify(GRAB)}], { stdio: 'inherit' });
      await new Promise((r) => setTimeout(r, 700));
      const release = ${hold ? 'holdTerminalWrites()' : '() => {}'};
      process.emitWarning('a warning of Node its own, during the run');
      console.error('a console line during the run');
      await new Promise((r) => agent.on('exit', r));
      spawnSync('perl', ['-e', '$SIG{TTOU}="IGNORE"; open(T,"+<","/dev/tty") or exit 1; ioctl(T,${TIOCSPGRP},pack("i",getpgrp(0)))']);
      release();
      console.error('END');`;
    const held = await ptyRun([process.execPath, '--input-type=module', '-e', child(true)], { timeout: 20 });
    const after = held.output.slice(held.output.indexOf('agent: holds the terminal'));
    assert.match(after, /Warning: a warning of Node its own, during the run/, held.output);
    assert.match(after, /a console line during the run\r\n/);
    assert.match(after, /\r\nEND\r\n/);
    assert.equal(held.exit, 0);
    // Control: the same writes, not held, stop the process (SIGTTOU): the shell reports the job stopped.
    const bare = await ptyRun([process.execPath, '--input-type=module', '-e', child(false)], { timeout: 20 });
    assert.match(bare.output, /agent: holds the terminal\r\n/);
    assert.doesNotMatch(bare.output, /\r\nEND\r\n/);
    assert.equal(bare.exit, 128 + 22, bare.output);
  });

  test('(review, round 36) a Docker run: the rendering the agent left is reset after its output, before stashbase says anything; control: the agent\'s bytes are there before it', { ...needs('docker'), timeout: 120_000 }, async () => {
    await inHome(async (a) => {
      const r = await ptyRun([process.execPath, BIN, 'agent', 'run', '--docker-sandbox', 'true', '--', 'sh', '-c', String.raw`echo agent-done; printf '\033[8m\033(0'`], { env: { ...a.env, TERM: 'xterm-256color' }, cwd: a.proj, timeout: 90 });
      assert.equal(r.exit, 0, r.output);
      const tail = r.output.slice(r.output.indexOf('agent-done'));
      assert.ok(tail.indexOf('\x1b[8m\x1b(0') !== -1, 'the agent left its rendering');
      assert.ok(tail.indexOf(renderingReset('xterm-256color')) > tail.indexOf('\x1b[8m\x1b(0'), r.output);
    });
  });

  test("(review, round 36) the agent runs on a terminal of its own: in a pipeline (`| tee`), its taking the terminal and setting tostop stop nothing of yours; control: outside, the same program stops the pipeline's tee, and the shell reports the job stopped", { ...needs('bwrap'), timeout: 120_000 }, async () => {
    await inHome(async (a) => {
      writeFileSync(join(a.proj, 'grab.pl'), `${GRAB.replace('sleep 2;', '')} print "agent-line\\n";`);
      const plant = "mkdir -p sub && git -C sub init -q && git -C sub config core.fsmonitor 'echo PWNED; false' && perl grab.pl";
      const log = join(a.proj, 'tee.log');
      const r = await ptyRun(['bash', '-c', `${shellQuote(process.execPath)} ${shellQuote(BIN)} agent run --profile attack -- sh -c ${shellQuote(plant)} | tee ${shellQuote(log)}`], { env: a.env, cwd: a.proj, timeout: 90 });
      assert.equal(r.exit, 0, r.output);
      assert.match(r.output, /agent: holds the terminal\r\n/);
      assert.match(r.output, /agent-line\r?\n/);
      assert.match(r.output, /the agent left a nested repository at .*\/sub/);
      assert.equal(existsSync(join(a.proj, 'sub', '.git')), false);
      // Control: the same program outside, its group taking the terminal, stops the pipeline's tee.
      const control = await ptyRun(['bash', '-c', `perl grab.pl | tee ${shellQuote(log)}`], { env: a.env, cwd: a.proj, timeout: 30 });
      assert.match(control.output, /agent: holds the terminal\r\n/);
      assert.equal(control.exit, 128 + 22, control.output);
    });
  });

  test("(review, round 36) on the agent's own terminal Ctrl+C still reaches the agent: while it floods its output (your keys go first), and where the run's input is a pipe (the terminal's signal passed on); ^Z suspends nothing there", { ...needs('bwrap'), timeout: 120_000 }, async () => {
    await inHome(async (a) => {
      const trap = "trap 'echo got-INT; exit 42' INT";
      const flood = await ptyRun([process.execPath, BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', `${trap}; echo READY; while :; do echo ................................................................; done`], { env: a.env, cwd: a.proj, timeout: 60, keys: [['READY', 1, '\x03']] });
      assert.match(flood.output, /got-INT\r\n/);
      assert.equal(flood.exit, 42);
      const piped = await ptyRun(['bash', '-c', `echo x | ${shellQuote(process.execPath)} ${shellQuote(BIN)} agent run --silent -- sh -c ${shellQuote(`${trap}; echo READY; while :; do sleep 0.1; done`)}`], { env: a.env, cwd: a.proj, timeout: 60, keys: [['READY', 0.5, '\x03']] });
      assert.match(piped.output, /got-INT\r/);
      assert.equal(piped.exit, 42);
      const suspend = await ptyRun([process.execPath, BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', `${trap}; echo READY; sleep 1; echo still-running`], { env: a.env, cwd: a.proj, timeout: 60, keys: [['READY', 0.2, '\x1a']] });
      assert.match(suspend.output, /still-running\r\n/);
      assert.equal(suspend.exit, 0);
    });
  });

  test("(review, round 36) the agent can neither suspend the terminal's output (TCXONC) nor make it exclusive (TIOCEXCL), with ^C and ^Q turned off: stashbase ends the run and moves a planted repository aside; control: outside, both ioctls succeed (undone at once)", { ...needs('bwrap'), timeout: 120_000 }, async () => {
    await inHome(async (a) => {
      // Each undone at once where it succeeds (TCOON, TIOCNXCL), so that the control itself goes on.
      writeFileSync(join(a.proj, 'flow.pl'), 'open(T, "+<", "/dev/tty") or die "tty: $!"; my @r; push @r, ioctl(T, 0x540A, 0) ? "tcooff=ok" : "tcooff=$!"; ioctl(T, 0x540A, 1); push @r, ioctl(T, 0x540C, 0) ? "excl=ok" : "excl=$!"; ioctl(T, 0x540D, 0); print join(" ", @r), "\n";');
      const plant = "mkdir -p sub && git -C sub init -q && git -C sub config core.fsmonitor 'echo PWNED; false' && stty -isig -ixon </dev/tty && perl flow.pl";
      const r = await ptyRun([process.execPath, BIN, 'agent', 'run', '--profile', 'attack', '--', 'sh', '-c', plant], { env: a.env, cwd: a.proj, timeout: 90 });
      assert.equal(r.exit, 0, r.output);
      assert.match(r.output, /tcooff=Operation not permitted excl=Operation not permitted\r\n/);
      assert.match(r.output, /the agent left a nested repository at .*\/sub/);
      assert.equal(existsSync(join(a.proj, 'sub', '.git')), false);
      const control = await ptyRun(['perl', 'flow.pl'], { env: a.env, cwd: a.proj, timeout: 30 });
      assert.match(control.output, /tcooff=ok excl=ok\r\n/);
    });
  });

  describe('a native run (real bwrap) whose agent takes the terminal, sets tostop, and leaves its rendering hostile', needs('bwrap'), () => {
    let stub: Server;
    let port = 0;
    let a: ReturnType<typeof attackHome>;
    before(async () => {
      // An upstream whose CA the proxy does not know: the proxy's first TLS failure is a line stashbase says during the run.
      const leaf = new LeafCache(testCa()).get('tls.test');
      stub = createServer({ key: leaf.keyPem, cert: leaf.certPem }, (_req, res) => res.end('ok\n'));
      await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
      port = (stub.address() as AddressInfo).port;
      // A secret bound to it: the proxy reads (intercepts) what goes there, and so dials it itself.
      a = attackHome(`[network]\negress_hosts = ["tls.test"]\n[network.hosts]\n"tls.test" = "127.0.0.1:${port}"\n[secrets.API_TOKEN]\nsource = "REAL_TOKEN"\nhosts = ["tls.test"]\n`);
      a.env.REAL_TOKEN = 'tok_realRealRealRealRealReal0123';
      spawnSync('git', ['init', '-q', a.proj]);
    });
    after(() => {
      stub.close();
      a.cleanup();
    });

    test('(review, round 36) stashbase is not stopped, its line of the run comes after the agent, and its warnings after the run render readable: the hostile rendering reset; control: the same bytes without the reset hide them', async () => {
      writeFileSync(join(a.proj, 'grab.pl'), GRAB.replace('setpgrp(0,0); ', '').replace('sleep 2;', ''));
      // Insert mode with text planted below the cursor (a second review: it was read on with stashbase's lines), concealed
      // text, the DEC line-drawing set, a scroll region of two lines, a hyperlink left open.
      const hostile = String.raw`\033[?1003h\033[?1004h\033[?1h\033[4h\033\067\n\n\n<- stale, nothing to do\033\070\033[8m\033(0\033[1;2r\033]8;;http://127.0.0.1:9/\033\\`;
      writeFileSync(join(a.proj, 'atk.sh'), `mkdir -p sub && git -C sub init -q && git -C sub config core.fsmonitor 'echo PWNED; false' && perl grab.pl && curl -sS -o /dev/null -w 'code=%{http_code}\\n' https://tls.test:${port}/; sleep 1; echo agent-done; printf '${hostile}'\n`);
      const r = await ptyRun([process.execPath, BIN, 'agent', 'run', '--profile', 'attack', '--', 'sh', 'atk.sh'], { env: { ...a.env, TERM: 'xterm-256color' }, cwd: a.proj, timeout: 90 });
      assert.equal(r.exit, 0, r.output);
      assert.match(r.output, /agent: holds the terminal\r\ncode=502\r\nagent-done\r\n/);
      const tail = r.output.slice(r.output.indexOf('agent-done'));
      // Said after the agent ended: the proxy's line of the run, then the end-of-run check's.
      const reset = renderingReset('xterm-256color');
      assert.ok(tail.includes(reset), 'the rendering reset follows the agent');
      assert.ok(tail.indexOf(reset) < tail.indexOf('tls.test'), 'before any word of stashbase after the agent');
      assert.equal(existsSync(join(a.proj, 'sub', '.git')), false);
      const screen = await render(r.output);
      const warning = screen.find((row) => /the agent left a nested repository at .*\/sub/.test(row.text));
      assert.ok(warning, screen.map((row) => row.text).filter(Boolean).join('\n'));
      assert.equal(warning.hidden, false);
      assert.equal(screen.some((row) => /stale/.test(row.text)), false, 'what the agent planted below is gone');
      assert.ok(screen.some((row) => /tls\.test/.test(row.text) && !row.hidden), 'the TLS line is shown');
      // Control: the same bytes without the reset, as a terminal shows them: the warning unreadable.
      const bare = await render(r.output.split(reset).join(''));
      assert.equal(bare.some((row) => /the agent left a nested repository/.test(row.text) && !row.hidden), false);
      assert.equal(bare.some((row) => /stale/.test(row.text)), true, 'planted below, it stays without the reset');
      // (Third review) mouse and focus reports and application cursor keys left on: off after the reset; control: on without it.
      assert.deepEqual(await inputModes(r.output), { mouse: 'none', focus: false, cursorKeys: false });
      assert.deepEqual(await inputModes(r.output.split(reset).join('')), { mouse: 'any', focus: true, cursorKeys: true });
    });
  });
});
