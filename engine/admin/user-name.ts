/** The columns of `app_user` a person's name is made of. */
export type NameColumns = { display_name: string | null; first_name: string | null; last_name: string | null };

/**
 * The name a user goes by: their display name, else their first and last names; null when they gave none. Never
 * their email: names are shown to people who may not see it (a chat partner, a customer told who is coming), so
 * each caller picks a neutral stand-in of its own for null.
 */
export function nameOnFile(user: NameColumns): string | null {
  return user.display_name || [user.first_name, user.last_name].filter(Boolean).join(' ') || null;
}
