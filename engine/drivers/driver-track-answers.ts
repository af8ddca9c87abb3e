import type { Logger } from 'pino';
import type { LocationVerdict } from './driver-location.ts';

/** Called once with a call's verdicts (one per fix, in order), or with the error that refused or failed them. */
export type VerdictsCallback = (error: unknown, verdicts: LocationVerdict[]) => void;

/** One call's answer: settled once every one of its fixes has its verdict. */
export type Answer = { verdicts: LocationVerdict[]; left: number; done: VerdictsCallback };

/** A fix of a batch, as far as answering goes: its call's answer and its place among that call's fixes. */
type Answered = { answer: Answer; index: number };

/**
 * Fixes answered per turn of the event loop. Each answer is an acknowledgement written to its socket (a frame and a
 * system call, 15–30 µs): a batch's answers go out in slices with the loop's I/O between them, so arriving fixes and
 * the next statements are not held behind a whole batch's acknowledgements.
 */
const ANSWER_SLICE = 50;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Settles each fix's answer with its verdict, {@link ANSWER_SLICE} fixes per turn of the event loop. A callback that
 * throws is logged and the others are still answered.
 */
export async function answerInSlices(batch: Answered[], verdicts: LocationVerdict[], logger: Logger): Promise<void> {
  for (let start = 0; start < batch.length; start += ANSWER_SLICE) {
    if (start > 0) await nextTurn();
    const end = Math.min(batch.length, start + ANSWER_SLICE);
    for (let i = start; i < end; i += 1) {
      const { answer, index } = batch[i]!;
      answer.verdicts[index] = verdicts[i]!;
      answer.left -= 1;
      if (answer.left !== 0) continue;
      try {
        answer.done(null, answer.verdicts);
      } catch (error) {
        logger.error({ err: error }, 'answering a location event failed');
      }
    }
  }
}

/**
 * A failed statement fails every call it carried a fix of, once each (a call split across statements may have had
 * fixes committed by another: a retry gets those back as `duplicate` or `stale`, nothing applied twice). A callback that throws is logged and
 * the others are still failed, as in {@link answerInSlices}.
 */
export function failAll(batch: Answered[], error: unknown, logger: Logger): void {
  for (const { answer } of batch) {
    if (answer.left === -1) continue;
    answer.left = -1;
    try {
      answer.done(error, []);
    } catch (thrown) {
      logger.error({ err: thrown }, 'answering a location event failed');
    }
  }
}
