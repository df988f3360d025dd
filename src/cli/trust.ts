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
  const trusted = madeRecord().trust(folder, programReadNames(remoteFromConfig(args, io.env)));
  if (trusted.length === 0) {
    io.out(printable(`${folder}: nothing in it is recorded as made by a command; nothing to trust.`));
    return 0;
  }
  for (const f of trusted) io.out(printable(`trusted ${f.path} (recorded as made by a command, seen ${f.at})`));
  return 0;
};
