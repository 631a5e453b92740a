// Original file: svc/v1/auth.proto

export interface App {
  name?: string;
  description?: string;
  public_addr?: string;
  public_url?: string;
  labels?: { [key: string]: string };
  uri?: string;
}

export interface App__Output {
  name: string;
  description: string;
  public_addr: string;
  public_url: string;
  labels: { [key: string]: string };
  uri: string;
}
