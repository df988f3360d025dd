import * as path from 'node:path';
import { programReadNames } from '../core/remote/program-reads';
import { UsageError } from './args';
import { madeRecord } from './config';
import type { Command } from './output';
import { printable } from './output';
import { remoteFromConfig } from './remote-config';

/**
 * `arbor trust FOLDER`: the user reviewed FOLDER's `.arbor`, `.claude`, `.vscode`, `.mcp.json`, the
 * names of the programs their config starts, or repository that a confined command made, and trusts
 * them from now on (decision 0111). Without FOLDER: the workspace (`--workspace`, else the current folder).
 */
export const trustCommand: Command = async (args, io) => {
  const ws = args.options.get('workspace');
  if (ws === true) throw new UsageError('--workspace needs a FOLDER');
  const given: string | undefined = args.positionals.length > 0 ? args.positionals[0] : ws;
  const folder = path.resolve(given ?? process.cwd());
  // What the refusal looks at: the names of the programs the user's config starts there too.
  const record = madeRecord();
  const trusted = record.trust(folder, programReadNames(remoteFromConfig(args, io.env)));
  // What only a program this config does not start reads (a `.codex` while Codex is configured in
  // VS Code's settings alone): left as it is, and said, or the user is told nothing is there.
  const left = record.untrustedIn(folder);
  if (trusted.length === 0 && left.length === 0) {
    io.out(printable(`${folder}: nothing in it is recorded as made by a command; nothing to trust.`));
    return 0;
  }
  for (const f of trusted) io.out(printable(`trusted ${f.path} (recorded as made by a command, seen ${f.at})`));
  for (const f of left) {
    io.out(
      printable(
        `left untrusted: ${f.path} (recorded as made by a command, seen ${f.at}): only a program your config (--config FILE or $ARBOR_CONFIG) does not start reads it. ` +
          `If Arbor starts one that does (VS Code's arbor.remote.* settings configure their own), review it and run 'arbor trust ${folder} --config FILE' with that program in FILE's "remote".`,
      ),
    );
  }
  return 0;
};
