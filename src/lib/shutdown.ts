/**
 * Signal handling in the shape of sample-controller's pkg/signals: the first SIGTERM/SIGINT aborts
 * the returned signal so everything drains; a second one calls `onForce` (src/cmd exits there).
 */
export interface SignalSource {
  on(event: NodeJS.Signals, listener: () => void): unknown;
  off(event: NodeJS.Signals, listener: () => void): unknown;
}

export interface ShutdownHandle {
  signal: AbortSignal;
  /** Removes the signal listeners (for tests and for a clean exit). */
  dispose(): void;
}

export function shutdownOnSignals(
  source: SignalSource,
  onForce: (sig: NodeJS.Signals) => void,
  signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'],
): ShutdownHandle {
  const controller = new AbortController();
  const listeners = signals.map((sig) => {
    const listener = (): void => {
      if (controller.signal.aborted) onForce(sig);
      else controller.abort(new Error(`received ${sig}`));
    };
    source.on(sig, listener);
    return { sig, listener };
  });
  return {
    signal: controller.signal,
    dispose: () => listeners.forEach(({ sig, listener }) => source.off(sig, listener)),
  };
}
