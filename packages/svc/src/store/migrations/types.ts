/** One schema step. Ids sort in the order they must run; a shipped migration is never edited, only followed. */
export interface Migration {
  id: string;
  up: string;
}
