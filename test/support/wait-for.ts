/**
 * Polls `check` until it returns true (or a truthy value, which is returned), failing with `description` after
 * `timeoutMs`. For effects that happen in the background: queue consumers, relay passes.
 */
export async function waitFor<T>(description: string, check: () => T | Promise<T>, timeoutMs = 5000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${description}`);
    await sleep(10);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
