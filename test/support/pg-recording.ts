import { Client } from 'pg';

/** One query `pg` sent: the connection it went out on and its text (trimmed, lower case). */
export type Sent = { connection: object; text: string };

/**
 * Every query `pg` sends while `work` runs, with the connection it went out on. `beforeAnswer`, when given, runs
 * after a query's answer arrives and before its caller sees it (for a callback query, the way the engine sends): a
 * test can make another transaction commit at that exact point of a command.
 */
export async function recording(work: () => Promise<void>, beforeAnswer?: (sent: Sent) => Promise<void>): Promise<Sent[]> {
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const sent: Sent[] = [];
  prototype.query = function (this: object, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? '');
    const query = { connection: this, text: text.trim().toLowerCase() };
    sent.push(query);
    const callback = args[1];
    if (beforeAnswer && typeof callback === 'function') {
      // A hook that fails fails the query, so that the test sees it.
      args[1] = (error: unknown, result: unknown) => void beforeAnswer(query).then(() => callback(error, result), (failed: unknown) => callback(failed, undefined));
    }
    return original.apply(this, args);
  };
  try {
    await work();
  } finally {
    prototype.query = original;
  }
  return sent;
}

/** Whether a query's text (lower case) names `id` (ids have upper-case letters). */
export const names = (text: string, id: string) => text.includes(id.toLowerCase());

/** The round trips of the transaction whose last statement (the COMMIT) names `id`, from its BEGIN; PREPAREs left out. */
export function transactionWith(sent: Sent[], id: string): string[] {
  const last = sent.findLastIndex((s) => names(s.text, id) && /\bcommit;?$/.test(s.text));
  if (last < 0) return [];
  const own = sent.slice(0, last + 1).filter((s) => s.connection === sent[last]!.connection && !s.text.startsWith('prepare '));
  const begin = own.findLastIndex((s) => s.text.startsWith('begin'));
  return own.slice(begin).map((s) => s.text);
}
