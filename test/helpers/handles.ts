/**
 * What code under test leaves behind that keeps a process alive: the timers, sockets, servers, child
 * processes and threads created while tracking that are still pending and ref'd. A jest worker still
 * holding one when its test files are done is killed with "A worker process has failed to exit
 * gracefully", so a close() must leave none of its own.
 */
import { createHook } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** The async resource kinds that keep the event loop alive while ref'd (requests, promises and the like end with their handle). */
const KINDS = new Set(['Timeout', 'TCPWRAP', 'TCPSERVERWRAP', 'PIPEWRAP', 'PIPESERVERWRAP', 'PROCESSWRAP', 'UDPWRAP', 'WORKER', 'FSEVENTWRAP', 'STATWATCHER']);

interface Tracked {
  type: string;
  resource: { hasRef?(): boolean };
  stack: string;
}

export interface HandleTracker {
  /** Each resource still pending and ref'd: its kind and where it was made. */
  alive(): string[];
  /** Waits up to `ms` for every tracked resource to end; returns those still alive then. */
  settle(ms: number): Promise<string[]>;
  stop(): void;
}

export function trackHandles(): HandleTracker {
  const live = new Map<number, Tracked>();
  let pausing = false;
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (!KINDS.has(type) || pausing) return;
      const stack = new Error().stack ?? '';
      // jest's own progress timers tick in this process when it runs the tests in band.
      if (stack.includes('/@jest/')) return;
      live.set(id, { type, resource: resource as Tracked['resource'], stack });
    },
    destroy(id) {
      live.delete(id);
    },
  });
  hook.enable();
  const alive = (): string[] =>
    [...live.values()]
      .filter((h) => h.resource.hasRef?.() ?? true)
      .map((h) => `${h.type} ${h.stack.split('\n').slice(2, 8).join('\n')}`);
  // settle's own timer is not the code's.
  const pause = (): Promise<void> => {
    pausing = true;
    try {
      return sleep(5);
    } finally {
      pausing = false;
    }
  };
  return {
    alive,
    async settle(ms) {
      const deadline = Date.now() + ms;
      while (alive().length > 0 && Date.now() < deadline) await pause();
      return alive();
    },
    stop: () => hook.disable(),
  };
}
