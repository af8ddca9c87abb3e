/** Leading bytes that identify a format: a confirmed file of one of these types must start with them. */
const SIGNATURES: Record<string, (head: Buffer) => boolean> = {
  'image/png': (h) => h.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (h) => h.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff])),
  'image/gif': (h) => ['GIF87a', 'GIF89a'].includes(h.subarray(0, 6).toString('latin1')),
  'image/webp': (h) => h.subarray(0, 4).toString('latin1') === 'RIFF' && h.subarray(8, 12).toString('latin1') === 'WEBP',
  'application/pdf': (h) => h.subarray(0, 5).toString('latin1') === '%PDF-',
  'text/plain': (h) => !h.includes(0),
  'text/csv': (h) => !h.includes(0),
};

/** How many leading bytes {@link matchesContentType} needs. */
export const SNIFF_BYTES = 64;

/**
 * Whether a file's first bytes agree with its declared content type. Types without a known signature pass: the
 * check catches a mislabelled upload (an executable announced as a PNG), not every possible format.
 */
export function matchesContentType(contentType: string, head: Buffer): boolean {
  const check = SIGNATURES[contentType];
  return check ? check(head) : true;
}
