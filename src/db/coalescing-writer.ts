/**
 * Group commit for one kind of small write: items submitted while a write is running (or waiting for the writer) go
 * into the next write together, one transaction for all of them, instead of one transaction each. Used by the
 * dispatcher to record delivery outcomes (src/publishing/dispatcher.ts): under load, dozens of outcomes arrive while
 * one transaction commits, and one transaction recording them all costs little more than one recording one.
 *
 * A batch whose write fails is written again item by item, each in its own transaction, so one bad item never takes
 * the others down; each submitter learns its own item's fate.
 */
import type { Store, StoreDb } from "./store";

interface Pending<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/** Writes `items` inside `tx` and answers one result per item, in order. Must follow the rules of a write() body. */
export type BatchWrite<T, R> = (tx: StoreDb, items: readonly T[]) => Promise<R[]>;

export interface CoalescingWriter<T, R> {
  /** Writes `item` in the next batch; answers its result once that batch committed. */
  submit(item: T): Promise<R>;
  /** Resolves once nothing is queued or being written. */
  idle(): Promise<void>;
}

/**
 * A writer over `store` that batches up to `maxBatch` items per transaction with `writeBatch`. The first item after a
 * quiet spell is written on the next turn of the event loop (so items arriving together share it); items arriving
 * while a batch is written wait for the next one.
 */
export function coalescingWriter<T, R>(store: Pick<Store, "write">, writeBatch: BatchWrite<T, R>, maxBatch = 256): CoalescingWriter<T, R> {
  let queue: Pending<T, R>[] = [];
  let running: Promise<void> | null = null;

  const writeOneByOne = async (batch: Pending<T, R>[]): Promise<void> => {
    for (const p of batch) {
      try {
        const [result] = await store.write((tx) => writeBatch(tx, [p.item]));
        p.resolve(result as R);
      } catch (error) {
        p.reject(error);
      }
    }
  };

  const drain = async (): Promise<void> => {
    // Let the items of this turn of the event loop join the first batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      let results: R[];
      try {
        results = await store.write((tx) => writeBatch(tx, batch.map((p) => p.item)));
      } catch {
        await writeOneByOne(batch);
        continue;
      }
      batch.forEach((p, i) => p.resolve(results[i] as R));
    }
  };

  const kick = (): void => {
    if (running) return;
    running = drain().finally(() => {
      running = null;
      // An item submitted between the last batch and this point.
      if (queue.length > 0) kick();
    });
  };

  return {
    submit(item: T): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        kick();
      });
    },
    async idle(): Promise<void> {
      while (running) await running;
    },
  };
}
