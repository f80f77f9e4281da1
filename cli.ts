// The command tree. Leaf modules load lazily, so `--version` and `--help`
// import nothing and `agent run` loads only what a run needs.
import { StashbaseError } from './lib/errors.js';
import { errorLabel, printable } from './lib/util/style.js';

// For the files bundled apart (scripts/bundle.mjs): one set of error classes.
export * from './lib/errors.js';

type Main = (argv: string[]) => Promise<number>;
interface Leaf {
  summary: string;
  load: () => Promise<Main>;
}
interface Group {
  summary: string;
  children: Record<string, Leaf | Group>;
}

const docker = (name: string, summary: string): Leaf => ({ summary, load: async () => (await import('./commands/agent-docker.js')).mains[name] as Main });
const worktrees = (name: string, summary: string): Leaf => ({ summary, load: async () => (await import('./commands/agent-worktrees.js')).mains[name] as Main });

export const TREE: Group = {
  summary: 'Run coding agents inside a sandbox that limits what they read, write, reach and learn of your credentials.',
  children: {
    agent: {
      summary: 'Run and manage sandboxed agents',
      children: {
        run: { summary: 'Run an agent command inside the sandbox', load: async () => (await import('./commands/agent-run.js')).main },
        validate: { summary: 'Check a profile and the backend it selects', load: async () => (await import('./commands/agent-validate.js')).main },
        trust: { summary: 'Trust a repository profile at its current content', load: async () => (await import('./commands/agent-trust.js')).main },
        audit: { summary: "Show a run's audit log, denials marked", load: async () => (await import('./commands/agent-audit.js')).main },
        status: { summary: 'The runs in progress, native and Docker', load: async () => (await import('./commands/agent-status.js')).main },
        docker: {
          summary: 'Manage the Docker backend',
          children: {
            build: docker('build', 'Build the sandbox image'),
            doctor: docker('doctor', 'Check Docker readiness'),
            status: docker('status', 'List per-run networks'),
            cleanup: docker('cleanup', 'Remove what crashed runs left'),
            shell: docker('shell', 'Open a shell in the sandbox image with the home volume'),
          },
        },
        hooks: {
          summary: "Hooks for the agents' own hook systems",
          children: {
            deps: {
              summary: 'Check packages before an agent installs them',
              children: {
                check: { summary: "Check the packages a command would install (the agent's PreToolUse hook)", load: async () => (await import('./commands/agent-hooks-check.js')).main },
                install: { summary: "Install the check into Claude Code's or Codex's hooks", load: async () => (await import('./commands/agent-hooks-install.js')).main },
              },
            },
          },
        },
        worktrees: {
          summary: 'Review, merge and remove agent worktrees',
          children: {
            list: worktrees('list', 'List agent worktrees'),
            merge: worktrees('merge', "Merge an agent's branch"),
            clean: worktrees('clean', 'Remove merged agent worktrees'),
            remove: worktrees('remove', "Discard an agent's work (alias: delete)"),
            delete: worktrees('delete', 'Alias of remove'),
          },
        },
      },
    },
    profile: {
      summary: 'Find and read profiles',
      children: {
        list: { summary: 'List the profiles --profile finds from here', load: async () => (await import('./commands/profile.js')).mains.list as Main },
        show: { summary: 'Show what a profile allows', load: async () => (await import('./commands/profile.js')).mains.show as Main },
        init: { summary: 'Write a starting profile for Claude Code or Codex', load: async () => (await import('./commands/profile.js')).mains.init as Main },
      },
    },
    scan: { summary: 'Look for secrets in files, staged changes or pushed commits; "scan install" adds git hooks', load: async () => (await import('./commands/scan.js')).main },
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
  return (await node.load())(rest);
}

export async function main(argv: string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (e) {
    if (e instanceof StashbaseError) {
      process.stderr.write(`${errorLabel()} ${printable(e.message)}\n`);
      return e.exitCode;
    }
    process.stderr.write(`stashbase: internal error: ${(e as Error).stack ?? String(e)}\n`);
    return 70;
  }
}
