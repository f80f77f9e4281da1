// What a native run is given (NativeContext) and what preparing it yields
// (NativePrepared): shared by prepare.ts, prepare-seatbelt.ts and execute.ts.
import type { ScratchCopy } from './scratch.js';
import type { BwrapInput } from '../../templates/bwrap.js';
import type { RelayInput } from '../../templates/bridge-relay.js';
import type { Plan } from '../../templates/plan.js';
import type { SystemdRunInput } from '../../templates/systemd-run.js';
import type { Command } from '../../templates/command.js';
import type { Protection } from '../paths/protect.js';
import type { Profile } from '../profile/types.js';
import type { ViewSpec } from '../views/spec.js';
import type { RunGitDirPlan } from '../git/run-git-dir.js';
import type { Mechanism } from './select.js';

export interface NativeContext {
  session: string;
  profile: Profile;
  command: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  home: string; // the user's home
  stashbaseHome: string;
  mechanism: Mechanism;
  /** Secret name -> placeholder value the agent sees. */
  placeholders: Record<string, string>;
  /** The per-run credential the proxy asks of every request (in the proxy URL the agent gets). */
  proxyToken: string;
  /** The bearer token of the run's hook endpoints (lib/hooks/endpoints.ts). */
  hookToken: string;
  /** For host-network runs the port is known only once the proxy listens. */
  proxyUrl?: string;
  /** Existing directories under a deny_write entry that stay writable (a worktree run's worktree). */
  writable?: string[];
  /** The run's standard input is a terminal (Seatbelt: the agent gets a relayed one of its own). */
  interactive?: boolean;
  /** Real paths, for Seatbelt's canonical rules (tests render a Mac's from Linux); the disk's when unset. */
  realPath?: (path: string) => string | null;
  /** A worktree run's worktree (its working directory may be a folder of it): the tree whose binds are checked and held, with the working directory. */
  worktreePath?: string;
  /** A worktree run's own branch (refs/heads/stashbase/<name>): the only branch its HEAD may point at. */
  worktreeBranch?: string;
  /** Paths the run itself keeps read-only besides the profile's deny_write (a worktree run's checkout): they never keep the git directory from being the run's own. */
  runDenyWrite?: string[];
  /** bwrap takes `--perms` before `--tmpfs` (0.5.0 and later); otherwise denied directories are bound. */
  bwrapTmpfsPerms?: boolean;
  /** bwrap takes `--bind-fd`: the binds whose source lies in the tree are made from descriptors checked at the start (templates/bwrap.ts heldRoots). */
  bwrapBindFd?: boolean;
  /** Not --silent: the sandbox may say what it cannot enforce here (no Landlock). */
  announce?: boolean;
}

export interface NativePrepared {
  plan: Plan;
  protection: Protection;
  runDir: string;
  /** The run's state out of every sandbox's reach (lib/run/run-dir.ts): its git directory, views, records. */
  stateDir: string;
  bwrap: BwrapInput | null;
  relay: RelayInput | null;
  systemd: SystemdRunInput | null;
  seatbelt: Command | null;
  /** Views to build before the sandbox starts and settle after it. */
  views: Array<{ spec: ViewSpec; dir: string }>;
  /** The run's own git directory: made before the sandbox starts, imported after it. */
  gitDir: RunGitDirPlan | null;
  /** The run's own temp folders, made in the run directory. */
  temps: string[];
  /** Private copies of shim folders (lib/native/scratch.ts), filled after the run directory is made. */
  scratch: ScratchCopy[];
  /** The deny patterns: what they match in a shim folder is not copied. */
  scratchPatterns: RegExp[];
  agentEnv: { set: Record<string, string>; unset: string[] };
  /**
   * ~/.claude.json lies where the run writes (the working directory is your home): the view's copy is what the
   * sandbox's claude uses, but the file itself is the agent's to write too. Kept at the start and settled after the
   * run as on macOS (lib/views/claude-config-watch.ts).
   */
  claudeConfigExposed?: boolean;
}
