import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Harness, type HarnessConfig } from '../core/harness';
import { invalidParams } from './errors';

/**
 * One harness per workspace root (a store allows one writer, so sessions of one folder share
 * its harness). A cwd inside the folder `arbor acp` was started for belongs to it; any other
 * cwd is a root of its own, with its store in `<root>/.arbor/store`.
 */
export class Workspaces {
  private readonly open = new Map<string, Promise<Harness>>();
  /** Roots whose harness is closing (`closeRoot`): the next open there waits for the store's lock to be let go. */
  private readonly closing = new Map<string, Promise<unknown>>();

  constructor(
    /** The harness deployment for a root (the CLI's flags and environment). */
    private readonly configFor: (root: string) => HarnessConfig,
    /** Where a root's store is (its config's `storeDir`, without building the rest). */
    private readonly storeOf: (root: string) => string,
    /** The folder the command was started for (`--workspace`, else its cwd). */
    readonly defaultRoot: string,
    /**
     * A placement's kept connection (`--nodes`, decision 0077): every folder directly in it is a
     * node's workspace root of its own, and a cwd anywhere else is refused.
     */
    readonly nodes?: string,
    /** The user's home folder: never a root of its own (only as the started-for folder). */
    private readonly home: string = os.homedir(),
  ) {}

  /** How many roots have a harness open (or opening). */
  get size(): number {
    return this.open.size;
  }

  isOpen(root: string): boolean {
    return this.open.has(root);
  }

  /** The roots with a harness, oldest opened first. */
  roots(): string[] {
    return [...this.open.keys()];
  }

  /** Whether a root is the folder the command was started for (kept open for the connection's life). */
  isDefault(root: string): boolean {
    return root === realOr(this.defaultRoot);
  }

  /**
   * Close one root's harness (no session of it is live): its store flushes and its lock is let
   * go; a later open makes it again. The harness closed (none when it was not open or failed to).
   */
  async closeRoot(root: string): Promise<Harness | undefined> {
    const p = this.open.get(root);
    if (!p) return undefined;
    this.open.delete(root);
    // Marked closing at once: an open of this root meanwhile waits for the store's lock (closed, or failed to close).
    const closed = p.then(
      async (h) => {
        await h.close();
        return h;
      },
      () => undefined,
    );
    this.closing.set(root, closed);
    try {
      return await closed;
    } finally {
      if (this.closing.get(root) === closed) this.closing.delete(root);
    }
  }

  /** The node folder a root is (its name: the node's store is named by it), when `nodes` is set. */
  nodeOf(root: string): string | undefined {
    if (!this.nodes) return undefined;
    const base = realOr(this.nodes);
    return path.dirname(root) === base ? path.basename(root) : undefined;
  }

  /** The workspace root of an ACP cwd; refuses a relative or missing folder (invalid params). */
  rootOf(cwd: unknown): string {
    if (typeof cwd !== 'string' || !path.isAbsolute(cwd)) throw invalidParams('RELATIVE_CWD', `cwd must be an absolute path, got ${JSON.stringify(cwd)}`);
    let real: string;
    try {
      real = fs.realpathSync(cwd);
    } catch {
      throw invalidParams('NO_SUCH_FOLDER', `cwd ${cwd} does not exist`);
    }
    if (!fs.statSync(real).isDirectory()) throw invalidParams('NO_SUCH_FOLDER', `cwd ${cwd} is not a folder`);
    if (this.nodes) {
      const base = realOr(this.nodes);
      const rel = path.relative(base, real);
      if (!rel || rel.startsWith('..') || path.isAbsolute(rel))
        throw invalidParams('NOT_A_NODE', `cwd ${cwd} is not inside a node's folder under ${base} (this arbor acp serves a placement's nodes only)`);
      return path.join(base, rel.split(path.sep)[0]!);
    }
    const base = realOr(this.defaultRoot);
    if (real === base || real.startsWith(base + path.sep)) return base;
    for (const root of this.open.keys()) if (real === root || real.startsWith(root + path.sep)) return root;
    // A root of its own is the sandbox's write boundary: the whole disk is none (a client with no folder open may send `/`).
    if (real === path.parse(real).root)
      throw invalidParams(
        'FILESYSTEM_ROOT',
        `cwd ${cwd} is the file system's root: as a workspace it would let the agent write anywhere; open a project folder (or start arbor acp with --workspace there)`,
      );
    // The home folder (or one above it) as a root would put ~/.ssh, shell profiles and ~/.arbor's own settings inside the write boundary.
    const home = realOr(this.home);
    if (real === home || home.startsWith(real + path.sep))
      throw invalidParams(
        'HOME_FOLDER',
        `cwd ${cwd} is ${real === home ? 'your home folder' : 'a folder above your home folder'}: as a workspace it would let the agent write your keys, shell profiles and Arbor's own settings; open a project folder inside it (or start arbor acp with --workspace there if you mean it)`,
      );
    return real;
  }

  /** Whether a root has sessions to look at: its harness is open or its store exists (a look at a folder makes no store in it). */
  stored(root: string): boolean {
    return this.open.has(root) || fs.existsSync(this.storeOf(root));
  }

  harness(root: string): Promise<Harness> {
    let h = this.open.get(root);
    if (!h) {
      const closing = this.closing.get(root);
      // Async: a config that refuses the root (decision 0111) is this open's rejection, not a throw out of `harness`.
      const open = async () => Harness.open(this.configFor(root));
      h = closing ? closing.then(open, open) : open();
      // A failed open is not cached: the next session/new tries again.
      h.catch(() => this.open.delete(root));
      this.open.set(root, h);
    }
    return h;
  }

  /** The harnesses opened so far, with their roots. */
  async opened(): Promise<{ root: string; harness: Harness }[]> {
    const out: { root: string; harness: Harness }[] = [];
    for (const [root, p] of this.open) {
      const harness = await p.catch(() => undefined);
      if (harness) out.push({ root, harness });
    }
    return out;
  }

  /** Close every harness: running turns end interrupted, stores flush and close. */
  async close(): Promise<void> {
    for (const { harness } of await this.opened()) await harness.close();
    this.open.clear();
  }
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
