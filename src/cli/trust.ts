import * as path from 'node:path';
import { UsageError } from './args';
import { madeRecord } from './config';
import type { Command } from './output';
import { printable } from './output';

/**
 * `arbor trust FOLDER`: the user reviewed FOLDER's `.arbor`, `.claude`, `.vscode` or repository
 * that a confined command made, and trusts them from now on (decision 0111). Without FOLDER: the
 * workspace (`--workspace`, else the current folder).
 */
export const trustCommand: Command = async (args, io) => {
  const ws = args.options.get('workspace');
  if (ws === true) throw new UsageError('--workspace needs a FOLDER');
  const given: string | undefined = args.positionals.length > 0 ? args.positionals[0] : ws;
  const folder = path.resolve(given ?? process.cwd());
  const trusted = madeRecord().trust(folder);
  if (trusted.length === 0) {
    io.out(printable(`${folder}: nothing in it is recorded as made by a command; nothing to trust.`));
    return 0;
  }
  for (const f of trusted) io.out(printable(`trusted ${f.path} (recorded as made by a command, seen ${f.at})`));
  return 0;
};
