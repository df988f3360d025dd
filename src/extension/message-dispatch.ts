// The controller's entry for webview messages: every message validated, a notice run by its
// handler (a failure logged), a request answered once (its result, or its error with the
// error's code), and after `dispose` nothing done (a request still gets its answer).
import type { HostToWebview, RequestFailed, RequestMessage, SelectionRedo, WebviewToHost } from '../protocol';
import type { NoticeHandlers, RequestHandlers } from './handlers/context';
import { PanelClosedError } from './panel-lifecycle';
import { ACTS_ON_SELECTION, describeInvalid, isWebviewToHost } from './validate-message';
import type { ControllerHooks, ViewPort } from './view-port';

/** The failure answer: the error's text, and its code when it has one (`HarnessError`, `StoreError`, `GoalError`, …). */
function failed(id: string, err: unknown): RequestFailed {
  const code = typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  return { type: 'request/done', id, ok: false, error: err instanceof Error ? err.message : String(err), ...(code ? { code } : {}) };
}

export class MessageDispatch {
  /** `notices`, `requests`: the controller's handler maps; `disposed`: whether the controller's `dispose` ran. */
  constructor(
    private readonly notices: NoticeHandlers,
    private readonly requests: RequestHandlers,
    private readonly log: ControllerHooks['log'],
    private readonly disposed: () => boolean,
    /**
     * Throws for a request a panel composed under a selection that has since moved elsewhere
     * (`ViewSelection.check`, decision 0120); run on arrival, before the handler's first await.
     */
    private readonly checkSelection: (port: ViewPort, msg: { sessionId?: string; selection?: number }, redo: SelectionRedo) => void,
  ) {}

  /** Entry point for every message from a webview. Bad input gets an error reply, never a crash. */
  async receive(port: ViewPort, msg: unknown): Promise<void> {
    if (this.disposed()) {
      // A view still posting while the host goes: a request gets its answer, nothing is done.
      const type = isWebviewToHost(msg) ? msg.type : 'a malformed message';
      this.log('warn', `${type} arrived after the panel was disposed; ignored`);
      if (isWebviewToHost(msg) && this.isRequest(msg)) port.post(failed(msg.id, new PanelClosedError(`"${msg.type}"`)));
      return;
    }
    if (!isWebviewToHost(msg)) {
      this.log('warn', `rejected webview message: ${describeInvalid(msg)}`);
      port.post({ type: 'message/rejected', code: 'BAD_MESSAGE', detail: describeInvalid(msg) });
      return;
    }
    if (this.isRequest(msg)) return this.request(port, msg);
    try {
      await (this.notices[msg.type] as (p: ViewPort, m: WebviewToHost) => Promise<void> | void)(port, msg);
    } catch (err) {
      this.log('error', `${msg.type} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Run a request's handler and answer it once: its result, or its error with the error's code. */
  private async request(port: ViewPort, msg: RequestMessage): Promise<void> {
    try {
      const redo = ACTS_ON_SELECTION[msg.type];
      if (redo) this.checkSelection(port, msg as { sessionId?: string; selection?: number }, redo);
      const result = await (this.requests[msg.type] as (p: ViewPort, m: RequestMessage) => Promise<object>)(port, msg);
      port.post({ type: 'request/done', id: msg.id, ok: true, ...result } as HostToWebview);
    } catch (err) {
      const answer = failed(msg.id, err);
      this.log('error', `${msg.type} failed: ${answer.error}${answer.code ? ` (${answer.code})` : ''}`);
      port.post(answer);
    }
  }

  private isRequest(msg: WebviewToHost): msg is RequestMessage {
    return Object.hasOwn(this.requests, msg.type);
  }
}
