// Entry of the packaged-extension test run (test/e2e/run-vsix-host-tests.mjs): Arbor installed
// from its .vsix into a fresh extensions folder, every out/test/host-vsix/**/*.test.js.
import { runHostMocha } from '../support/host-mocha';

export function run(): Promise<void> {
  return runHostMocha(__dirname);
}
