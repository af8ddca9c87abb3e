/** What the catalog needs of the site it belongs to: its id and the currency prices default to. */
export type CatalogSite = { id: string; currency: string };

/**
 * The currency stored with a price: the one given, else the site's. A record without a price keeps whatever
 * currency it was given (null if none), so clearing a price does not silently forget an explicit currency.
 */
export function priceCurrency(site: CatalogSite, priceCents: number | null, currency: string | null): string | null {
  if (currency) return currency;
  return priceCents === null ? null : site.currency;
}
