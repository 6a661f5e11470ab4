// Start-up progress of one service (issue 10 item 10): GET /readyz answers 200 only once it is complete
// (migrations, catalog, sandbox seed and the demo credentials file written). Kept at deps.startup.

export interface StartupState {
  /** what start-up is doing now, for the 503 detail */
  step: string;
  complete: boolean;
  /** set when the service begins to stop: GET /readyz answers 503 from then on (D120) */
  stopping?: boolean;
}
