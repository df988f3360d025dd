import { describeError } from '../core/errors';
import type { SessionEvent } from '../core/session/events';
import type { Session } from '../core/session/session';
import { type HostToWebview, isRunNodeId } from '../protocol';
import { runIdOf } from './presenter/workflow-runs';
import { workflowRunView } from './presenter/workflow-view';
import type { ViewPort, ViewPorts } from './view-port';

type RunViewMessage = Extract<HostToWebview, { type: 'workflow/view' }>;

const GONE = 'This workflow run is not stored any more (the conversation that ran it was deleted). Close this tab.';

/** How often a run's tab is refolded while its run writes (a 1,000-agent run writes 2,000 events). */
const REFRESH_MS = 150;

/** Where a run feed reads: the run's parent, its log, whether the run can still be going. */
export interface RunFeedSource {
  /** The session that ran this run node, once the tree knows it. */
  parentOf(nodeId: string): string | undefined;
  session(id: string): Promise<Session>;
  runOpen(runId: string): boolean;
  log(level: 'warn', text: string): void;
}

/**
 * What a workflow run's tab receives (issue 21.6): its view folded from the parent's log when
 * the tab opens, then again (coalesced) whenever the parent writes one of the run's events or
 * the tool result that answers it. The agents' status and cost reach the tab as tree nodes.
 */
export class RunFeed {
  private readonly pending = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly views: ViewPorts,
    private readonly source: RunFeedSource,
  ) {}

  /** A tab starts showing a run node: its view now (`null` when no stored run has that id). */
  async reset(port: ViewPort, nodeId: string): Promise<void> {
    port.post(await this.fold(nodeId));
  }

  /** An event of `sessionId`: refresh the tabs of its runs that it concerns. */
  event(sessionId: string, e: SessionEvent): void {
    if (!e.type.startsWith('workflow/') && e.type !== 'tool/result' && e.type !== 'turn/end') return;
    for (const nodeId of this.views.shown()) {
      if (!isRunNodeId(nodeId) || this.source.parentOf(nodeId) !== sessionId) continue;
      if ('runId' in e && e.runId !== runIdOf(nodeId)) continue;
      this.schedule(nodeId);
    }
  }

  dispose(): void {
    for (const t of this.pending.values()) clearTimeout(t);
    this.pending.clear();
  }

  private schedule(nodeId: string): void {
    if (this.pending.has(nodeId)) return;
    this.pending.set(
      nodeId,
      setTimeout(() => {
        this.pending.delete(nodeId);
        void this.fold(nodeId).then((msg) => this.views.toSession(nodeId, msg));
      }, REFRESH_MS),
    );
  }

  private async fold(nodeId: string): Promise<RunViewMessage> {
    const parent = this.source.parentOf(nodeId);
    const runId = runIdOf(nodeId);
    const gone: RunViewMessage = { type: 'workflow/view', nodeId, view: null, problem: GONE };
    if (!parent) return gone;
    try {
      const s = await this.source.session(parent);
      const view = workflowRunView(parent, s.events, runId, this.source.runOpen(runId));
      return view ? { type: 'workflow/view', nodeId, view } : gone;
    } catch (err) {
      this.source.log('warn', `could not read the workflow run ${nodeId}: ${describeError(err)}`);
      return {
        type: 'workflow/view',
        nodeId,
        view: null,
        problem: `The conversation that ran this workflow could not be read (${describeError(err)}). Reload the window; if it stays, the Arbor output log says more.`,
      };
    }
  }
}
