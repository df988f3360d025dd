// Where the ACP test client lives (installed by scripts/acp/setup.mjs into the ignored .tools/).
import { join } from 'node:path';
import { toolsDir } from '../e2e/paths.mjs';

/** Exact version: bump it here; setup.mjs reinstalls when the stamp disagrees. */
export const acpxVersion = '0.19.1';
export const acpToolsDir = join(toolsDir, 'acp');
export const acpxPackage = join(acpToolsDir, 'node_modules', 'acpx');
/** acpx's CLI, run as `node acpxEntry …` (it declares Node >= 22.13 but runs on this project's Node 20.19+ for what the tests use). */
export const acpxEntry = join(acpxPackage, 'dist', 'cli.js');
