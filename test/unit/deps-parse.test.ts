// Finding package installs in real shell lines: what each names, and what is
// left alone (lockfile installs, other commands, text that only mentions them).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findInstalls } from '../../lib/deps/install-commands.js';
import { simpleCommands } from '../../lib/deps/shell-words.js';

/** A compact form: registry packages as eco:name[@version][ via registry], the rest as eco?spec (why). */
function show(line: string): string[] {
  return findInstalls(line).map((r) =>
    r.kind === 'registry'
      ? `${r.ecosystem}:${r.name}${r.version !== undefined ? `@${r.version}` : ''}${r.registry ? ` via ${r.registry}` : ''}${r.softMissing ? ' (soft)' : ''}`
      : `${r.ecosystem}?${r.spec} (${r.why})`,
  );
}

const TABLE: Array<[string, string[]]> = [
  // npm and friends
  ['npm install left-pad', ['npm:left-pad']],
  ['npm i -D typescript@5.4.2 @types/node@^20', ['npm:typescript@5.4.2', 'npm:@types/node@^20']],
  ['npm install --save-dev --registry=http://r.test/ foo', ['npm:foo via http://r.test/']],
  ['npm --registry http://r.test install foo', ['npm:foo via http://r.test']],
  ['npm_config_registry=http://r.test npm i foo', ['npm:foo via http://r.test']],
  ['npm install', []],
  ['npm ci', []],
  ['npm install --prefix /opt/x', []],
  ['npm run build && npm test', []],
  ['npm install -w packages/a lodash', ['npm:lodash']],
  ['npm i ./local-dir ../x.tgz file:../y', ['npm?./local-dir (a local path)', 'npm?../x.tgz (a local path)', 'npm?file:../y (a local path)']],
  ['npm i https://example.test/x.tgz git+https://example.test/r.git github:u/r u/r', ['npm?https://example.test/x.tgz (a URL)', 'npm?git+https://example.test/r.git (a git repository)', 'npm?github:u/r (a git repository)', 'npm?u/r (a GitHub repository (user/repo))']],
  ['npm i my-react@npm:react@18', ['npm:react@18']],
  ['npm i @scope/pkg@^1 @scope/other', ['npm:@scope/pkg@^1', 'npm:@scope/other']],
  ['pnpm add -D vitest', ['npm:vitest']],
  ['pnpm install', []],
  ['pnpm --filter web add zod', ['npm:zod']],
  ['yarn add react react-dom', ['npm:react', 'npm:react-dom']],
  ['yarn global add serve', ['npm:serve']],
  ['yarn install --frozen-lockfile', []],
  ['yarn', []],
  ['bun add hono', ['npm:hono']],
  ['bun i', []],
  ['npx -y create-vite@latest app', ['npm:create-vite@latest']],
  ['npx --package=cowsay -- cowsay hi', ['npm:cowsay']],
  ['pnpm dlx degit user/repo', ['npm:degit']],
  ['bunx prettier --write .', ['npm:prettier']],
  ['pnpm exec jest', []],
  ['yarn exec tsc', []],
  ['yarn dlx create-next-app', ['npm:create-next-app']],
  ['bun x cowsay hi', ['npm:cowsay']],
  // chains, prefixes, quoting
  ['cd app && npm install express; echo done', ['npm:express']],
  ['sudo -E npm install -g typescript', ['npm:typescript']],
  ['sudo -u builder env FOO=1 npm i leftpad', ['npm:leftpad']],
  ['env -u HOME X=y /usr/bin/npm install "left pad"', []],
  ["echo '{}' | npm install 'express@>=4'", ['npm:express@>=4']],
  ['(cd web && npm i vue) || true', ['npm:vue']],
  ['bash -c "npm install express && pip install flask"', ['npm:express', 'pypi:flask']],
  ['echo $(npm install evil-pkg)', ['npm:evil-pkg']],
  ['npm install $PKG', ['npm?$PKG (its name is only known when the shell runs it)']],
  ['timeout 60 npm install foo 2>&1 | tee log.txt', ['npm:foo']],
  ['npm install foo > out.txt 2> err.txt', ['npm:foo']],
  ['echo "npm install fake-name"', []],
  ['# npm install commented-out', []],
  ['cat <<EOF > notes.md\nnpm install only-text\nEOF\nnpm i real-one', ['npm:real-one']],
  ['git commit -m "npm install foo"', []],
  ['if true; then npm i cond-pkg; fi', ['npm:cond-pkg']],
  ['ls | xargs npm install', ['npm?(from standard input) (its names come from standard input)']],
  // Python
  ['pip install requests', ['pypi:requests']],
  ['pip3 install "Django>=4,<5" flask==3.0.0 Flask_Cors', ['pypi:django@>=4,<5', 'pypi:flask@3.0.0', 'pypi:flask-cors']],
  ['python -m pip install -U pip', ['pypi:pip']],
  ['python3.11 -I -m pip install --user "requests[socks]>=2"', ['pypi:requests@>=2']],
  ['pip install -r requirements.txt', ['pypi?-r requirements.txt (the packages a requirements file lists)']],
  ['pip install -e .', ['pypi?. (a local path)']],
  ['pip install -i http://idx.test/simple foo', ['pypi:foo via http://idx.test/simple']],
  ['pip install --extra-index-url http://other.test/simple foo', ['pypi:foo (soft)']],
  ['pip install ./dist/x-1.0-py3-none-any.whl git+https://example.test/r.git', ['pypi?./dist/x-1.0-py3-none-any.whl (a local path)', 'pypi?git+https://example.test/r.git (a version-control URL)']],
  ['pip install "pkg @ https://example.test/pkg.zip"', ['pypi?pkg @ https://example.test/pkg.zip (a direct URL)']],
  ['pip list', []],
  ['uv pip install numpy', ['pypi:numpy']],
  ['uv add --dev pytest', ['pypi:pytest']],
  ['uv --directory app add httpx', ['pypi:httpx']],
  ['uvx ruff check .', ['pypi:ruff']],
  ['pipx install black', ['pypi:black']],
  // Rust and Go
  ['cargo add serde --features derive', ['crates:serde']],
  ['cargo add tokio@1.38 anyhow', ['crates:tokio@1.38', 'crates:anyhow']],
  ['cargo install ripgrep --version 14.1.0', ['crates:ripgrep@14.1.0']],
  ['cargo add --git https://example.test/r.git foo', ['crates?foo (a git repository)']],
  ['cargo +nightly add rand', ['crates:rand']],
  ['cargo build', []],
  ['go get github.com/gorilla/mux@v1.8.1', ['go:github.com/gorilla/mux@v1.8.1']],
  ['go get -u example.test/x/tools/...', ['go?example.test/x/tools/... (a package pattern)']],
  ['go install example.test/x/tools/cmd/stringer@latest', ['go:example.test/x/tools/cmd/stringer@latest']],
  ['go install ./cmd/app', []],
  ['go get example.com/old@none', []],
  ['go build ./...', []],
];

for (const [line, expected] of TABLE) {
  test(`installs in ${JSON.stringify(line)}`, () => {
    assert.deepEqual(show(line), expected);
  });
}

test('the shell cutter: quotes, escapes, substitutions and redirections', () => {
  assert.deepEqual(simpleCommands(`a 'b c' "d \\"e\\"" f\\ g && h|i;j & k`), [['a', 'b c', 'd "e"', 'f g'], ['h'], ['i'], ['j'], ['k']]);
  assert.deepEqual(simpleCommands('x 2>&1 >/dev/null y <in z'), [['x', 'y', 'z']]);
  assert.deepEqual(simpleCommands('a "$(b c)" `d`'), [['a', '$', '$'], ['b', 'c'], ['d']]);
  assert.deepEqual(simpleCommands('a \\\n b'), [['a', 'b']]);
});
