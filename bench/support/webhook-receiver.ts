import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { idle } from './open-loop.ts';

type ReceiverMessage =
  | { type: 'ready'; port: number; cert: string }
  | { type: 'arrivals'; keys: string[]; at: number[]; bad: number };

export type BenchReceiver = {
  port: number;
  /** The receiver's self-signed certificate (PEM), for the webhook client's `ca`. */
  cert: string;
  /** Arrival time (wall-clock ms) of each delivered body, by its `data.key`; a repeated delivery keeps the first. */
  arrivals: Map<string, number>;
  /** Deliveries that arrived twice (at least once delivery: should stay 0 in a healthy run). */
  duplicates(): number;
  /** Requests refused because their hex signature did not match. */
  badSignatures(): number;
  /** Resolves once `count` keys starting with `prefix` have arrived; rejects after `timeoutMs`. */
  waitFor(prefix: string, count: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
};

/** Forks bench/support/webhook-receiver-process.ts and collects its arrivals. */
export async function startBenchReceiver(secret: string): Promise<BenchReceiver> {
  const child = fork(fileURLToPath(new URL('./webhook-receiver-process.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_WEBHOOK_SECRET: secret },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const arrivals = new Map<string, number>();
  const counts = new Map<string, number>();
  let duplicates = 0;
  let bad = 0;
  let notify: () => void = idle;
  const ready = new Promise<{ port: number; cert: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the receiver process exited (code ${code}) before it was ready`)));
    child.on('message', (message: ReceiverMessage) => {
      if (message.type === 'ready') {
        resolve(message);
        return;
      }
      bad += message.bad;
      message.keys.forEach((key, i) => {
        if (arrivals.has(key)) {
          duplicates++;
          return;
        }
        arrivals.set(key, message.at[i]!);
        const prefix = key.slice(0, key.indexOf(':'));
        counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
      });
      notify();
    });
  });
  const { port, cert } = await ready;
  return {
    port,
    cert,
    arrivals,
    duplicates: () => duplicates,
    badSignatures: () => bad,
    waitFor(prefix, count, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          notify = idle;
          reject(new Error(`receiver: ${counts.get(prefix) ?? 0} of ${count} "${prefix}" deliveries after ${timeoutMs} ms`));
        }, timeoutMs);
        notify = () => {
          if ((counts.get(prefix) ?? 0) < count) return;
          clearTimeout(timer);
          notify = idle;
          resolve();
        };
        notify();
      });
    },
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}
