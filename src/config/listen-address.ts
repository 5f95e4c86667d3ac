// A host and port to listen on (or, for the store, to connect to).
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}
