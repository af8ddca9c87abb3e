/**
 * A seeded PRNG (sfc32, seeded through splitmix32): the same seed gives the same numbers on every machine, unlike
 * Math.random. Separate streams (`fork`) keep demand, fleet and behaviour independent, so adding a driver does not
 * reshuffle every job.
 */
export type Random = {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [min, max). */
  between(min: number, max: number): number;
  /** Integer in [0, n). */
  index(n: number): number;
  /** Exponential with the given mean. */
  exponential(mean: number): number;
  /** An independent stream named by `label`. */
  fork(label: string): Random;
};

export function createRandom(seed: number): Random {
  const words = splitmix32(seed >>> 0);
  let a = words();
  let b = words();
  let c = words();
  let d = words();
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i += 1) next();
  return {
    next,
    between: (min, max) => min + (max - min) * next(),
    index: (n) => Math.floor(next() * n),
    exponential: (mean) => -mean * Math.log(1 - next()),
    fork: (label) => createRandom((seed ^ hashString(label)) >>> 0),
  };
}

/** Expands a 32-bit seed into well-mixed words (sfc32 needs four). */
function splitmix32(seedValue: number): () => number {
  let s = seedValue;
  return () => {
    s = (s + 0x9e3779b9) | 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** A stable 32-bit hash (FNV-1a) for stream labels and per-decision draws. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * A draw in [0, 1) fixed by the seed and a key (e.g. driver and job): the same driver answers the same offer the
 * same way under every strategy, so strategies are compared on the same behaviour, not on different luck.
 */
export function keyedDraw(seed: number, key: string): number {
  return createRandom((seed ^ hashString(key)) >>> 0).next();
}
