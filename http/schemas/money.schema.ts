import { Type } from 'typebox';

/** Money is integer cents with a currency (DESIGN §5); amounts stop at the int4 range the columns store. */
export const Cents = Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'integer cents' });

export const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: "ISO 4217 code; defaults to the site's with a price" });
