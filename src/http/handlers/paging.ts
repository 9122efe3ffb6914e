/**
 * Reads `limit` and `starting_after` (docs/conventions.md "Collections"). openapi-backend has already checked both
 * against the spec (limit 1–100), so this only applies the default and converts the string.
 */
export function page(query: { limit?: number | string; starting_after?: string }) {
  return {
    limit: query.limit === undefined ? 20 : Number(query.limit),
    startingAfter: query.starting_after,
  };
}

/** The collection envelope: `{ data, has_more, next_cursor }`, where the cursor is the last item's id. */
export function withCursor<T extends { id: string }>(result: { data: T[]; has_more: boolean }) {
  return { ...result, next_cursor: result.has_more ? result.data[result.data.length - 1].id : null };
}
