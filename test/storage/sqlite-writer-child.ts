/**
 * Child process for the kill -9 test: writes to a SqliteStore in a loop and prints one JSON line
 * per acknowledged write (`{"op","key","revision"}`) until it is killed.
 * Usage: node --import ./test/helpers/register-ts.mjs test/storage/sqlite-writer-child.ts DB_PATH HISTORY_LIMIT
 */
import { SqliteStore } from '../../src/apiserver/storage/sqlite/sqlite.js';

const [dbPath, historyLimit] = process.argv.slice(2);
if (!dbPath || !historyLimit) throw new Error('usage: sqlite-writer-child DB_PATH HISTORY_LIMIT');
const store = await SqliteStore.open(dbPath, { historyLimit: Number(historyLimit) });

// A fixed mix of creates, updates and deletes over a small key space.
for (let i = 0; ; i++) {
  const key = `/registry/core/configmaps/ns/k${i % 17}`;
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `k${i % 17}` }, data: { i: String(i) } };
  const existing = await store.get(key);
  let op: string;
  let revision: number;
  if (!existing) {
    op = 'create';
    revision = (await store.create(key, object)).revision;
  } else if (i % 5 === 0) {
    op = 'delete';
    revision = (await store.delete(key, existing.revision)).revision;
  } else {
    op = 'update';
    revision = (await store.update(key, object, existing.revision)).revision;
  }
  // stdout to a pipe is synchronous on Linux: once this returns the parent can read the line.
  process.stdout.write(`${JSON.stringify({ op, key, i, revision })}\n`);
}
