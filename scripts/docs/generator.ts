/** A generated document: its path in the repository and a pure function that renders it. */
export interface DocGenerator {
  path: string;
  render(): string | Promise<string>;
}
