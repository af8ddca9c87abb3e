/**
 * How many decimal digits a currency's minor unit has: 2 for EUR and USD (cents), 0 for JPY (yen are the smallest
 * unit), 3 for KWD (fils). Money columns named `*_cents` hold amounts in this minor unit, and rates and bounds are
 * given in major units, so every conversion between the two goes through this count.
 *
 * The count comes from the runtime's ICU/CLDR currency data, which follows ISO 4217 for the currencies pay is made
 * in. A well-formed code ICU does not know counts 2 (ICU's own default); a malformed one (only possible from a row
 * written outside the API, which checks `^[A-Z]{3}$`) counts 2 as well rather than failing every earning of the site.
 */
export function minorUnitDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? DEFAULT_DIGITS;
  } catch (error) {
    if (error instanceof RangeError) return DEFAULT_DIGITS;
    throw error;
  }
}

const DEFAULT_DIGITS = 2;
