import { closest, distance } from "fastest-levenshtein";

/** The closest of `candidates` to `input`, if it is close enough to be a plausible typo. */
export function suggest(input: string, candidates: readonly string[]): string | undefined {
  if (candidates.length === 0) return undefined;
  const lower = input.toLowerCase();
  const byCase = candidates.find((c) => c.toLowerCase() === lower);
  if (byCase) return byCase;
  const best = closest(input, [...candidates]);
  // Allow roughly one edit per three characters: "comand" → "command", but not "x" → "env".
  return distance(input, best) <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
}

/** Up to `limit` candidates ordered by edit distance, for "did you mean" lists. */
export function nearest(input: string, candidates: readonly string[], limit = 3): string[] {
  const lower = input.toLowerCase();
  return candidates
    .map((c) => {
      const cl = c.toLowerCase();
      // Substring matches ("issue" in "list_issues") rank above raw edit distance.
      const bonus = cl.includes(lower) || lower.includes(cl) ? -100 : 0;
      return { c, d: distance(lower, cl) + bonus };
    })
    .filter(({ c, d }) => d < 0 || d <= Math.max(2, Math.floor(c.length / 2)))
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, limit)
    .map(({ c }) => c);
}

/** ` Did you mean "a" or "b"?`, or nothing when there is no guess. */
export function didYouMean(guesses: readonly string[]): string {
  return guesses.length > 0 ? ` Did you mean ${guesses.map((g) => `"${g}"`).join(" or ")}?` : "";
}

/**
 * The candidate a model most likely meant by a parameter name it wrote: another spelling of the
 * same words (`repoName` → `repo_name`), a typo (`mesage` → `message`), swapped letters
 * (`titel` → `title`), a longer form (`repository` → `repo`), or an abbreviation (`msg` →
 * `message`, `desc` → `description`: same first letter, letters in order).
 */
export function suggestName(input: string, candidates: readonly string[]): string | undefined {
  const plain = (s: string) => s.toLowerCase().replace(/[_-]/g, "");
  const wanted = plain(input);
  const same = candidates.find((c) => plain(c) === wanted);
  if (same) return same;
  const typo = suggest(input, candidates);
  if (typo) return typo;
  const letters = (s: string) => [...plain(s)].sort().join("");
  const swapped = candidates.find((c) => letters(c) === letters(input));
  if (swapped) return swapped;
  if (wanted.length < 2) return undefined;
  // A longer form of a parameter's name (`repository` for `repo`): the longest name it starts with.
  const longer = candidates
    .filter((c) => plain(c).length >= 3 && wanted.startsWith(plain(c)))
    .sort((a, b) => b.length - a.length);
  if (longer[0]) return longer[0];
  const abbreviated = candidates
    .filter((c) => plain(c)[0] === wanted[0] && isSubsequence(wanted, plain(c)))
    .sort((a, b) => a.length - b.length);
  return abbreviated[0];
}

function isSubsequence(short: string, long: string): boolean {
  let i = 0;
  for (const c of long) if (c === short[i]) i++;
  return i === short.length;
}
