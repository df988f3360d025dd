/** What every event carries: its place in the log, its type and when it was appended. */
export interface Base<T extends string> {
  seq: number;
  type: T;
  /** ISO-8601 time the event was appended. */
  at: string;
}
