// Original file: svc/v1/auth.proto

export interface ClusterInfo {
  cluster_name?: string;
  server_version?: string;
  min_client_version?: string;
  recommended_client_version?: string;
}

export interface ClusterInfo__Output {
  cluster_name: string;
  server_version: string;
  min_client_version: string;
  recommended_client_version: string;
}
