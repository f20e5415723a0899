/** One page of a cursor-paginated list, in the OpenAI shape every list operation of the contract answers. */
export function listPage<Item extends { id: string }>(data: Item[], hasMore: boolean) {
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: hasMore,
  };
}
