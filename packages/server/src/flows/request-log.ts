// The API request log's writer (docs/dashboard.md#api-request-log). A request's answer is never held up
// for its log row: the merchant API's onResponse hook hands the record here, and rows are written in
// batches apart from any request's transaction — one statement for up to BATCH_ROWS of them, at most
// FLUSH_DELAY_MS after the first waits, one write at a time. A process that dies loses the rows still
// waiting (at most FLUSH_DELAY_MS of requests): the log is for people reading what happened, not a record
// money depends on.
import type { Deps } from '../deps.ts';
import { type ApiRequestRecord, insertApiRequests } from '../store/api-requests.ts';

/** How long a record may wait before its batch is written, milliseconds. */
const FLUSH_DELAY_MS = 100;
/** A batch this large is written at once. */
const BATCH_ROWS = 500;
/**
 * Records waiting at most: past this (the database stalled for a long while), new ones are dropped and
 * counted in a warning, rather than growing the process's memory without end.
 */
const MAX_WAITING = 20_000;

export class ApiRequestLog {
  private waiting: ApiRequestRecord[] = [];
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dropped = 0;

  constructor(private readonly deps: Deps) {}

  add(record: ApiRequestRecord): void {
    if (this.waiting.length >= MAX_WAITING) {
      this.dropped++;
      return;
    }
    this.waiting.push(record);
    if (this.waiting.length >= BATCH_ROWS) this.start();
    else this.timer ??= setTimeout(() => this.start(), FLUSH_DELAY_MS);
  }

  /** Resolves once everything added so far is written (or its write failed and was logged). */
  async flushed(): Promise<void> {
    while (this.writing || this.waiting.length > 0) {
      if (!this.writing) this.start();
      await this.writing;
    }
  }

  private start(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing ??= this.write()
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error }, 'API request log rows could not be written; they are lost'),
      )
      .finally(() => {
        this.writing = undefined;
        // Records added while the last batch was written wait for their own timer, or go now if many.
        if (this.waiting.length >= BATCH_ROWS) this.start();
        else if (this.waiting.length > 0) this.timer ??= setTimeout(() => this.start(), FLUSH_DELAY_MS);
      });
  }

  private async write(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    if (this.dropped > 0) {
      this.deps.logger.warn({ dropped: this.dropped }, 'API request log fell behind: rows dropped');
      this.dropped = 0;
    }
    await insertApiRequests(this.deps.db.kysely, this.deps.db.dialect, batch);
  }
}
