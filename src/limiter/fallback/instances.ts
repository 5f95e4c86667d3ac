// The divisor of the fallback limit: the configured instance count, else the
// live count membership last saw (kept while Redis is down).
export class InstanceCount {
  constructor(
    private readonly fixed: number | undefined,
    private readonly live: { readonly count: number },
  ) {}

  get value(): number {
    return this.fixed ?? this.live.count;
  }
}
