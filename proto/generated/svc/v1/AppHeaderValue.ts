// Original file: svc/v1/auth.proto

export interface AppHeaderValue {
  name?: string;
  value?: string;
}

export interface AppHeaderValue__Output {
  name: string;
  value: string;
}
