/**
 * kube-apiserver's etcd compactor: every interval, compact the history up to the revision seen
 * one interval earlier, so a watch or continue token stays good for at least one interval and
 * older ones get 410 Expired. Replicas coordinate through `compact_rev_key`, whose etcd version
 * is a logical clock: a replica compacts only if the key's version is still the one it saw last
 * time (a compare-and-swap that also records the revision being compacted to); when another
 * replica got there first, it adopts that clock and the current revision instead. So however
 * many replicas run, history is compacted about once per interval. The key lives outside the
 * prefix, as kube-apiserver's does.
 */
import type { EtcdKv } from './kv-client.js';
import type { Logger } from '../../../log/logger.js';

export const COMPACT_REV_KEY = 'compact_rev_key';

interface CompactorHooks {
  /** Called with the revision history was compacted to (by this replica or, as recorded, another). */
  compacted: (revision: number) => void;
  logger?: Logger;
}

/** Starts the loop; the returned function stops it and waits for a running step. */
export function startCompactor(client: Pick<EtcdKv, 'txn' | 'compact'>, intervalMs: number, hooks: CompactorHooks): () => Promise<void> {
  const key = Buffer.from(COMPACT_REV_KEY);
  let clock = 0;
  let revision = 0;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const step = async (): Promise<void> => {
    const res = await client.txn({
      compare: [{ key, target: 'Version', result: 'Equal', version: clock }],
      success: [{ request_put: { key, value: Buffer.from(String(revision)) } }],
      failure: [{ request_range: { key } }],
    });
    const current = Number(res.header.revision);
    if (!res.succeeded) {
      const kv = res.responses[0]?.response_range?.kvs[0];
      clock = kv ? Number(kv.version) : 0;
      if (kv) hooks.compacted(Number(kv.value.toString()));
      revision = current;
      return;
    }
    clock++;
    const target = revision;
    revision = current;
    // The first step only records where history starts; there is nothing a full interval old yet.
    if (target === 0) return;
    await client.compact({ revision: target });
    hooks.compacted(target);
    hooks.logger?.info({ revision: target }, 'etcd history compacted');
  };

  const schedule = (): void => {
    timer = setTimeout(() => {
      running = step()
        .catch((err: unknown) => hooks.logger?.warn({ err }, 'etcd compaction failed'))
        .finally(() => {
          running = undefined;
          if (timer) schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  schedule();

  return async () => {
    clearTimeout(timer);
    timer = undefined;
    await running;
  };
}
