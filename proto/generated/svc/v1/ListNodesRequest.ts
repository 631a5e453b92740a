// Original file: svc/v1/auth.proto

export interface ListNodesRequest {
  search?: string;
  labels?: string;
  status?: string;
  limit?: number;
  start_key?: string;
  with_logins?: boolean;
}

export interface ListNodesRequest__Output {
  search: string;
  labels: string;
  status: string;
  limit: number;
  start_key: string;
  with_logins: boolean;
}
