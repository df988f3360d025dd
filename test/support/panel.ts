import type { HarnessConfig } from '../../src/core/harness';
import { PanelController } from '../../src/extension/controller';
import { statusBarView } from '../../src/extension/presenter/status-bar';
import type { ApprovalPrompt, PanelSettings } from '../../src/protocol';
import { FakePort } from './fake-port';
import { makeHarness, type TestHarness } from './harness';
import { ModelServer } from './model-server';

export const PANEL_SETTINGS: PanelSettings = {
  sandbox: 'workspace-write',
  approval: 'ask',
  restricted: false,
  hasApiKey: true,
  modelSource: 'endpoint',
  model: 'test-model',
};

export interface PanelOptions {
  /** Harness overrides; the controller is always its approval port. Default: approval ask, releaseDelayMs 5. */
  harness?: Partial<HarnessConfig>;
  settings?: PanelSettings;
  /** Connect a panel view and send `webview/ready` before each test (default true). */
  panel?: boolean;
}

/** What the tests of a `panelPerTest` describe see: read through the getters, so each test gets its own. */
export interface PanelWorld {
  readonly server: ModelServer;
  readonly t: TestHarness;
  readonly c: PanelController;
  /** The panel view, connected and ready (unless `panel: false`). */
  readonly port: FakePort;
  /** What the controller's hooks were told: log lines (`level text`), transcripts opened, commands run, approval changes. */
  readonly logs: string[];
  readonly opened: string[];
  readonly commandsRun: string[];
  readonly approvalChanges: { pending: number; added?: ApprovalPrompt }[];
  /** The status bar's text each time the controller said its figures moved without an event. */
  readonly statusBar: string[];
  /** Another view, connected and ready. */
  view(kind: 'panel' | 'transcript', sessionId?: string): Promise<FakePort>;
  /**
   * Close this test's controller and harness and open new ones on other harness overrides (the
   * closed harness's folders stay until the test ends: `{ storeDir: w.t.storeDir }` reopens its store).
   * `between` runs once both are closed and before the new ones open (another process may use the store then).
   */
  reopen(harness: Partial<HarnessConfig>, between?: () => Promise<void>): Promise<void>;
}

/**
 * Registers mocha hooks in the calling describe: one test model server for the suite and, per
 * test, the server reset, a PanelController over a fresh harness on real temp folders (hooks
 * recorded, no VS Code), and a ready panel view; all closed after the test.
 */
export function panelPerTest(options: PanelOptions = {}): PanelWorld {
  let server: ModelServer;
  let t: TestHarness | undefined;
  let c: PanelController | undefined;
  let port: FakePort;
  const logs: string[] = [];
  const opened: string[] = [];
  const commandsRun: string[] = [];
  const approvalChanges: { pending: number; added?: ApprovalPrompt }[] = [];
  const statusBar: string[] = [];
  const settings = options.settings ?? PANEL_SETTINGS;

  const view = async (kind: 'panel' | 'transcript', sessionId?: string): Promise<FakePort> => {
    const p = new FakePort(kind);
    c!.connect(p);
    await c!.receive(p, { type: 'webview/ready', view: kind, ...(sessionId ? { sessionId } : {}) });
    return p;
  };
  const open = async (overrides: Partial<HarnessConfig>): Promise<void> => {
    const controller = new PanelController(async () => harness.h, {
      settings: () => settings,
      openTranscript: (id) => opened.push(id),
      log: (level, text) => logs.push(`${level} ${text}`),
      progress: (_title, work) => work(),
      runCommand: async (command) => {
        commandsRun.push(command);
      },
      approvalsChanged: (pending, added) => approvalChanges.push({ pending: pending.length, ...(added ? { added } : {}) }),
      statusChanged: () => statusBar.push(statusBarView(controller.statusCounts(), controller.totalSpend()).text),
    });
    const harness = await makeHarness(server, { approval: 'ask', releaseDelayMs: 5, ...overrides, approvalPort: controller });
    c = controller;
    t = harness;
    if (options.panel !== false) port = await view('panel');
  };
  /** Harnesses a `reopen` closed: their folders stay until the test ends (the next one may use them). */
  const retired: TestHarness[] = [];
  const close = async (): Promise<void> => {
    try {
      await c?.dispose();
    } finally {
      await t?.cleanup();
      for (const old of retired.splice(0)) await old.cleanup();
      c = undefined;
      t = undefined;
    }
  };

  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    for (const list of [logs, opened, commandsRun, approvalChanges, statusBar]) list.length = 0;
    await open(options.harness ?? {});
  });
  afterEach(close);

  return {
    get server() {
      return server;
    },
    get t() {
      return t!;
    },
    get c() {
      return c!;
    },
    get port() {
      return port;
    },
    logs,
    opened,
    commandsRun,
    approvalChanges,
    statusBar,
    view,
    reopen: async (overrides, between) => {
      await c?.dispose();
      await t?.h.close();
      if (t) retired.push(t);
      await between?.();
      await open({ ...options.harness, ...overrides });
    },
  };
}
