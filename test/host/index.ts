// Entry of the extension-host test run (npm run test:host): the extension in development mode
// from this repository, every out/test/host/**/*.test.js (test/support/host-mocha.ts).
import { runHostMocha } from '../support/host-mocha';

export function run(): Promise<void> {
  return runHostMocha(__dirname);
}
