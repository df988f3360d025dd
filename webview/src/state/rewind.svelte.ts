// "Rewind…" from a message (decision 0059): choose what (files, conversation, both) and whose
// changes (this node, or its subtree), see the preview — a diff per file, a choice per conflict —
// before anything is written, apply it, then offer "Undo rewind".
import type { RequestBody, RequestResults, RequestType, RewindChoiceView, RewindPreview, RewindWhat } from '../../../src/protocol';

type Ask = <K extends RequestType>(body: RequestBody<K> & { type: K }, what: string) => Promise<RequestResults[K] | undefined>;

export type RewindStep = 'closed' | 'choose' | 'preview' | 'done';

export class RewindFlow {
  step: RewindStep = $state('closed');
  sessionId = $state('');
  seq = $state(0);
  what: RewindWhat = $state('files');
  subtree = $state(false);
  preview: RewindPreview | undefined = $state.raw();
  /** Per file of the preview: the human's choice (a conflict starts with none). */
  choices: (RewindChoiceView | null)[] = $state([]);
  busy = $state(false);
  result: RequestResults['rewind/apply'] | undefined = $state.raw();

  /** Every conflict has a choice: Apply may go on. */
  readonly decided = $derived(this.preview?.files.every((f, i) => !f.conflict || f.conflict.reason === 'unavailable' || this.choices[i] !== null) ?? true);

  /**
   * `composed`: what a request carries of the panel's selection (decision 0120), read at each
   * click: the dialog shows only while the chat shows its session, so the number it is composed
   * under is the one of that moment (after a fork of "Both" the panel shows the fork, and an
   * "Undo rewind" clicked back on this session is composed under the newer number).
   */
  constructor(
    private readonly ask: Ask,
    private readonly composed: () => { selection?: number } = () => ({}),
  ) {}

  open(sessionId: string, seq: number): void {
    this.sessionId = sessionId;
    this.seq = seq;
    this.what = 'files';
    this.subtree = false;
    this.preview = undefined;
    this.result = undefined;
    this.step = 'choose';
  }

  close(): void {
    this.step = 'closed';
    this.preview = undefined;
  }

  /** The preview of the chosen rewind (the conversation alone has no files: straight to the confirmation). */
  async showPreview(): Promise<void> {
    if (this.what === 'conversation') {
      this.preview = { token: '', undo: false, files: [] };
      this.choices = [];
      this.step = 'preview';
      return;
    }
    await this.#load({ type: 'rewind/preview', sessionId: this.sessionId, seq: this.seq, subtree: this.subtree, ...this.composed() });
  }

  choose(i: number, choice: RewindChoiceView): void {
    this.choices[i] = choice;
  }

  async apply(): Promise<void> {
    const p = this.preview;
    if (!p || !this.decided || this.busy) return;
    this.busy = true;
    try {
      const what: RewindWhat = p.undo ? 'files' : this.what;
      const r = await this.ask(
        {
          type: 'rewind/apply',
          sessionId: this.sessionId,
          seq: this.seq,
          what,
          ...(p.token ? { token: p.token } : {}),
          choices: [...this.choices],
          ...this.composed(),
        },
        p.undo ? 'Undoing the rewind' : 'Rewinding',
      );
      if (!r) return;
      this.result = r;
      this.step = 'done';
    } finally {
      this.busy = false;
    }
  }

  /** "Undo rewind": the preview of putting back what the rewind overwrote. */
  async undo(): Promise<void> {
    const seq = this.result?.undoSeq;
    if (seq === undefined) return;
    this.seq = seq;
    await this.#load({ type: 'rewind/preview', sessionId: this.sessionId, seq, subtree: false, undo: true, ...this.composed() });
  }

  async #load(body: RequestBody<'rewind/preview'> & { type: 'rewind/preview' }): Promise<void> {
    this.busy = true;
    try {
      const r = await this.ask(body, 'Previewing the rewind');
      if (!r) return;
      this.preview = r.preview;
      this.choices = r.preview.files.map(() => null);
      this.result = undefined;
      this.step = 'preview';
    } finally {
      this.busy = false;
    }
  }
}
