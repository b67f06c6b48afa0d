import { z } from 'zod';

/** The longest duration any video submission may ask for: keeps reservations sane (the vendors' own limits are far lower). */
export const MAX_SECONDS = 3600;

/** A `duration` in whole seconds. */
export const Seconds = z.number().int('must be a whole number of seconds').min(1).max(MAX_SECONDS);
