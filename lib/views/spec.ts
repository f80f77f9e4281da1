// A view is how the sandbox sees an agent's state folder, whose parts must be
// treated differently: history and login kept, hooks and settings not. (Git's
// own directory is no view: the run gets one of its own, lib/git/run-git-dir.ts.)
// The sandbox sees a folder of the run's own at the host path; into it each existing entry is bound writable ("live"),
// bound read-only, copied, or replaced by an empty folder. After the run the
// copies named in `merge` are carried back by their rule, the folders the
// agent made that `adoptDirs` names are moved over, and everything else the
// agent changed is left behind and named.
//
// A view is a directory mount: a rename the host makes inside the real
// folder (git config, an agent rewriting its settings) cannot detach it,
// unlike a bind over a single file, which the kernel drops when its file is
// renamed over.

/**
 * How a copy comes back: new lines appended (a prompt history: the lines of the
 * shape its agent writes, lib/views/settle.ts); Claude Code's config merged
 * without its executable keys; a login file as a refresh of the login alone
 * (lib/views/login-merge.ts), when yours did not change meanwhile.
 */
export type Merge = 'append' | 'claude-config' | 'claude-login' | 'codex-login';

export interface ViewSpec {
  /** A file name for the run directory: claude, codex. */
  id: string;
  /** How messages name it: ~/.claude. */
  label: string;
  /** The host folder the view stands for (its real path where the name is a link); the sandbox sees the view there. */
  at: string;
  /** The name it goes by, where that is a link to `at` (GNU stow's ~/.claude), for rules written with it. */
  linkedAs?: string;
  /** Directories bound writable (by name: your existing ones, or every one from `liveFrom`). */
  live: string[];
  /** Where the live directories come from when not `at` (the sessions' store of agent_sessions = "sandbox"); made where missing. */
  liveFrom?: string;
  /** The run's working directory and its repository's top: what of your agents' per-project state the run may change. */
  trees?: string[];
  /** Host directories bound read-only. */
  readOnly: string[];
  /** Host files copied in: what the agent does to them stays in the run unless `merge` names them. */
  copies: string[];
  /** Host directories replaced by an empty folder of the run's own (caches, per-session scripts). */
  empty: string[];
  /** Names carried back after the run (files, existing or new), and how. */
  merge: Record<string, Merge>;
  /** Where a merged name lives on the host when not at `at/name` (the copy's source too). */
  hostPaths: Record<string, string>;
  /** Folders the agent may create that are moved to the host after the run (when the host has none). */
  adoptDirs: string[];
  /** New names left behind without a note (lock files, caches). */
  quiet: RegExp | null;
}
