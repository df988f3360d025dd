import { git } from '../worktree/git';
import { PlacementError } from './types';

// A git bundle taken in without `git bundle unbundle` or `git fetch` (decision 0081): both look
// over the repository's refs — every worktree's HEAD among them — and fail on a worktree being
// made beside them (the half-made `worktrees/<name>/` of decision 0077's retry). The bundle is a
// short text header (its prerequisites and refs) and a pack; the pack goes to `git index-pack`,
// which reads no ref at all, and the caller names the commit with `update-ref`. A prerequisite the
// repository lacks fails loudly at the first use of the commit (a missing object), never silently:
// the client bundled only what the far side said it lacked (`have`).

/** The pack inside a bundle (v2 or v3): everything after the header's blank line. */
export function packOf(bundle: Buffer): Buffer {
  const sig = bundle.subarray(0, 20).toString('latin1');
  if (!sig.startsWith('# v2 git bundle\n') && !sig.startsWith('# v3 git bundle\n'))
    throw new PlacementError('SYNC_FAILED', 'what came is not a git bundle (no "# v2/v3 git bundle" header); sync again.');
  const end = bundle.indexOf('\n\n', 0, 'latin1');
  if (end < 0 || bundle.subarray(end + 2, end + 6).toString('latin1') !== 'PACK')
    throw new PlacementError('SYNC_FAILED', 'the bundle has no pack after its header; sync again.');
  return bundle.subarray(end + 2);
}

/**
 * The bundle's objects into `repo` (a worktree's repository from its folder, or a bare one named: `bareRepo`), as a pack of its own.
 * `strict` (what comes back from a far side): every object checked as `git fsck` does — a tree naming `.git`, `..` or a
 * path with a slash (what a checkout would refuse, but Arbor's apply writes itself) is refused, and nothing is kept.
 */
export async function ingestBundle(repo: { cwd: string; gitDir?: string }, bundle: Buffer, opts: { strict?: boolean } = {}): Promise<void> {
  const pack = packOf(bundle);
  try {
    await git(['index-pack', '--stdin', '--fix-thin', ...(opts.strict ? ['--strict'] : [])], { ...repo, input: pack, maxBuffer: 1024 * 1024 });
  } catch (err) {
    if (!opts.strict) throw err;
    throw new PlacementError('SYNC_FAILED', `the changes that came back hold objects git refuses (${(err as Error).message}); nothing was taken in.`);
  }
}

/**
 * A bundle of one pack (`git pack-objects --thin --revs` of `tip ^prerequisite`) naming `tip` as
 * `ref`, as `git bundle create` writes it: v2 for SHA-1 ids, v3 with its object format for SHA-256.
 */
export function bundleOfPack(pack: Buffer, prerequisite: string, tip: string, ref: string): Buffer {
  const head = tip.length === 64 ? '# v3 git bundle\n@object-format=sha256\n' : '# v2 git bundle\n';
  return Buffer.concat([Buffer.from(`${head}-${prerequisite}\n${tip} ${ref}\n\n`, 'latin1'), pack]);
}
