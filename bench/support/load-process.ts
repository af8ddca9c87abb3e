import autocannon from 'autocannon';

/**
 * Runs autocannon in a child process (forked by load.ts): the servers under test keep the main process's event
 * loop to themselves, and on a 2-core machine the load generator gets the other core instead of sharing the
 * server's. Not a worker thread: outside the main thread autocannon assumes it is one of its own `workers` and
 * returns raw histograms without the per-second request statistics.
 * One message in (autocannon options), one message out (its result, or the error text).
 */
const send = process.send?.bind(process);
if (!send) throw new Error('load-process.ts must be forked with an IPC channel');

process.on('message', (options: autocannon.Options) => {
  autocannon(options).then(
    (result) => send({ ok: true, result }),
    (error: unknown) => send({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
// The parent closing the channel (or dying) is the signal to stop.
process.on('disconnect', () => process.exit(0));
