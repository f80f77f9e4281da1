// The command tree. Leaf modules load lazily, so `--version` and `--help`
// import nothing and `agent run` loads only what a run needs.
import { StashbaseError, UsageError } from './lib/errors.js';
import { errorLabel, printable } from './lib/util/style.js';
import { guardStandardStreams } from './lib/util/terminal.js';
import type { FlagSpec } from './lib/util/argv.js';

// For the files bundled apart (scripts/bundle.mjs): one set of error classes.
export * from './lib/errors.js';

type Main = (argv: string[]) => Promise<number>;
interface Leaf {
  summary: string;
  load: () => Promise<Main>;
  /** Its flags, for completion (commands/complete.ts): the same module's. */
  flags: () => Promise<FlagSpec[]>;
}
interface Group {
  summary: string;
  children: Record<string, Leaf | Group>;
}

/** A command from its module, which exports its main and its flags; loaded only when it runs (or is completed). */
const command = (summary: string, mod: () => Promise<{ main: Main; flags: FlagSpec[] }>): Leaf => ({
  summary,
  load: async () => (await mod()).main,
  flags: async () => (await mod()).flags,
});
const profileCommand = (name: string, summary: string): Leaf => ({
  summary,
  load: async () => (await import('./commands/profile.js')).mains[name] as Main,
  flags: async () => (await import('./commands/profile.js')).flagsOf[name] as FlagSpec[],
});

export const TREE: Group = {
  summary: 'Run coding agents inside a sandbox that limits what they read, write, reach and learn of your credentials.',
  children: {
    agent: {
      summary: 'Run and manage sandboxed agents',
      children: {
        run: command('Run an agent command inside the sandbox', () => import('./commands/agent-run.js')),
        validate: command('Check a profile and the backend it selects', () => import('./commands/agent-validate.js')),
        trust: command('Trust a repository profile at its current content', () => import('./commands/agent-trust.js')),
        audit: command("Show a run's audit log, denials marked", () => import('./commands/agent-audit.js')),
        status: command('The runs in progress, native and Docker', () => import('./commands/agent-status.js')),
        docker: {
          summary: 'Manage the Docker backend',
          children: {
            build: command('Build the sandbox image', () => import('./commands/agent-docker-build.js')),
            doctor: command('Check Docker readiness', () => import('./commands/agent-docker-doctor.js')),
            status: command('List per-run networks', () => import('./commands/agent-docker-status.js')),
            cleanup: command('Remove what crashed runs left', () => import('./commands/agent-docker-cleanup.js')),
            shell: command('Open a shell in the sandbox image with the home volume', () => import('./commands/agent-docker-shell.js')),
          },
        },
        hooks: {
          summary: "Hooks for the agents' own hook systems",
          children: {
            deps: {
              summary: 'Check packages before an agent installs them',
              children: {
                check: command("Check the packages a command would install (the agent's PreToolUse hook)", () => import('./commands/agent-hooks-check.js')),
                install: command("Install the check into Claude Code's or Codex's hooks", () => import('./commands/agent-hooks-install.js')),
              },
            },
          },
        },
        worktrees: {
          summary: 'Review, merge and remove agent worktrees',
          children: {
            list: command('List agent worktrees', () => import('./commands/agent-worktrees-list.js')),
            merge: command("Merge an agent's branch", () => import('./commands/agent-worktrees-merge.js')),
            clean: command('Remove merged agent worktrees', () => import('./commands/agent-worktrees-clean.js')),
            remove: command("Discard an agent's work (alias: delete)", () => import('./commands/agent-worktrees-remove.js')),
            delete: command('Alias of remove', async () => {
              const m = await import('./commands/agent-worktrees-remove.js');
              return { main: (argv: string[]) => m.main(argv, 'delete'), flags: m.flags };
            }),
          },
        },
      },
    },
    profile: {
      summary: 'Find and read profiles',
      children: {
        list: profileCommand('list', 'List the profiles --profile finds from here'),
        show: profileCommand('show', 'Show what a profile allows'),
        init: profileCommand('init', 'Write a starting profile for Claude Code or Codex'),
      },
    },
    scan: command('Look for secrets in files, staged changes or pushed commits; "scan install" adds git hooks', () => import('./commands/scan.js')),
  },
};

function groupHelp(path: string[], g: Group): string {
  const name = ['stashbase', ...path].join(' ');
  const entries = Object.entries(g.children);
  const width = Math.max(...entries.map(([k]) => k.length));
  return [
    `Usage: ${name} <command> [options]`,
    '',
    g.summary,
    '',
    'Commands:',
    ...entries.map(([k, c]) => `  ${k.padEnd(width)}  ${c.summary}`),
    '',
    `Run "${name} <command> --help" for a command's options.${path.length === 0 ? '\n"stashbase --version" prints the version; "stashbase completion bash|zsh|fish" a completion script.' : ''}`,
  ].join('\n') + '\n';
}

async function dispatch(argv: string[]): Promise<number> {
  // The shells' completion asks here (commands/complete.ts); never shown in help.
  if (argv[0] === '__complete') {
    const { candidates } = await import('./commands/complete.js');
    const cword = Number(argv[1]);
    if (!Number.isInteger(cword) || cword < 1) return 2;
    for (const c of await candidates(TREE, cword, argv.slice(2))) process.stdout.write(`${c}\n`);
    return 0;
  }
  if (argv[0] === 'completion') {
    const { script } = await import('./commands/complete.js');
    const text = script(argv[1] ?? '');
    if (argv.length !== 2 || text === '') {
      process.stderr.write('Usage: stashbase completion bash|zsh|fish   (prints the script: eval "$(stashbase completion bash)", or in fish: stashbase completion fish | source)\n');
      return argv[1] === '--help' || argv[1] === '-h' ? 0 : 2;
    }
    process.stdout.write(text);
    return 0;
  }
  const path: string[] = [];
  let node: Leaf | Group = TREE;
  let rest = argv;
  while ('children' in node) {
    const [word, ...tail] = rest;
    // "help agent run" at any level is "agent run --help".
    if (word === 'help' && tail.length > 0) {
      rest = [...tail, '--help'];
      continue;
    }
    if (word === undefined || word === '--help' || word === '-h' || word === 'help') {
      process.stdout.write(groupHelp(path, node));
      return word === undefined && path.length > 0 ? 2 : 0;
    }
    const child: Leaf | Group | undefined = Object.hasOwn(node.children, word) ? node.children[word] : undefined;
    if (!child) {
      const name = ['stashbase', ...path].join(' ');
      process.stderr.write(`stashbase: unknown command ${JSON.stringify(word)} for ${name} (see ${name} --help)\n`);
      return 2;
    }
    path.push(word);
    node = child;
    rest = tail;
  }
  // Every command works from the working directory: one removed under the shell is said, not an internal error (help needs none).
  const own = rest.indexOf('--') === -1 ? rest : rest.slice(0, rest.indexOf('--'));
  if (!own.includes('--help') && !own.includes('-h') && !cwdExists()) {
    throw new UsageError('the current folder no longer exists (it was removed after your shell entered it): cd into a folder that exists and run it again');
  }
  return (await node.load())(rest);
}

function cwdExists(): boolean {
  try {
    process.cwd();
    return true;
  } catch {
    return false;
  }
}

export async function main(argv: string[]): Promise<number> {
  guardStandardStreams();
  try {
    return await dispatch(argv);
  } catch (e) {
    if (e instanceof StashbaseError) {
      // Lines after the first indented: a name in the message holding a newline never starts a line like stashbase's own.
      process.stderr.write(`${errorLabel()} ${printable(e.message).split('\n').map((l, i) => (i === 0 || /^\s/.test(l) ? l : `  ${l}`)).join('\n')}\n`);
      return e.exitCode;
    }
    process.stderr.write(`stashbase: internal error: ${printable((e as Error).stack ?? String(e))}\n`);
    return 70;
  }
}
