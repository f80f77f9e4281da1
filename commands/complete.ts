// Shell completion: `stashbase completion bash|zsh|fish` prints a script that
// asks `stashbase __complete CWORD WORD…` for the candidates at the cursor,
// worked out from the same command table `--help` uses (cli.ts): commands,
// each command's flags (from its own module), a flag's listed values (true|false, native|docker),
// and the profiles --profile finds from here. Nothing else is run.
import type { FlagSpec } from '../lib/util/argv.js';

type Main = (argv: string[]) => Promise<number>;
export interface Node {
  summary: string;
  children?: Record<string, Node>;
  load?: () => Promise<Main>;
  flags?: () => Promise<FlagSpec[]>;
}

async function profiles(): Promise<string[]> {
  const { availableProfiles } = await import('../lib/profile/load.js');
  return availableProfiles({ source: 'auto', cwd: process.cwd(), env: process.env });
}

/** The candidates for the word at `cword` of `words` (words[0] is the program). */
export async function candidates(tree: Node, cword: number, words: string[]): Promise<string[]> {
  const current = words[cword] ?? '';
  const before = words.slice(1, cword);
  if (before.includes('--')) return [];
  let node = tree;
  const path: string[] = [];
  let i = 0;
  for (; i < before.length && node.children; i++) {
    const w = before[i] as string;
    if (w === 'help') continue;
    const next = Object.hasOwn(node.children, w) ? node.children[w] : undefined;
    if (!next) return [];
    node = next;
    path.push(w);
  }
  if (node.children) return [...Object.keys(node.children), ...(path.length === 0 ? ['help', 'completion'] : ['help'])].filter((c) => c.startsWith(current));
  const flags = (await node.flags?.()) ?? [];
  const prev = before[before.length - 1];
  const valueOf = prev?.startsWith('--') ? flags.find((f) => f.name === prev.slice(2) && f.kind === 'value') : undefined;
  if (valueOf) {
    if (valueOf.name === 'profile') return (await profiles()).filter((p) => p.startsWith(current));
    const listed = valueOf.value?.includes('|') ? valueOf.value.split('|') : [];
    return listed.filter((v) => v.startsWith(current));
  }
  if (current.startsWith('-')) return [...flags.map((f) => `--${f.name}`), '--help'].filter((f) => f.startsWith(current));
  return [];
}

export function script(shell: string): string {
  if (shell === 'bash' || shell === 'zsh') {
    return [
      '# stashbase completion (bash; zsh through bashcompinit): eval "$(stashbase completion bash)"',
      ...(shell === 'zsh' ? ['autoload -U +X bashcompinit && bashcompinit'] : []),
      '_stashbase() {',
      '  local IFS=$\'\\n\'',
      '  COMPREPLY=($(stashbase __complete "$COMP_CWORD" "${COMP_WORDS[@]}" 2>/dev/null))',
      '}',
      'complete -o default -F _stashbase stashbase',
      '',
    ].join('\n');
  }
  if (shell === 'fish') {
    return [
      '# stashbase completion (fish): stashbase completion fish | source',
      'function __stashbase_complete',
      '  set -l words (commandline -opc) (commandline -ct)',
      '  stashbase __complete (math (count $words) - 1) $words 2>/dev/null',
      'end',
      "complete -c stashbase -f -a '(__stashbase_complete)'",
      '',
    ].join('\n');
  }
  return '';
}
