// Original file: svc/v1/auth.proto

export interface ClusterInfo {
  cluster_name?: string;
  server_version?: string;
  min_client_version?: string;
  recommended_client_version?: string;
  local_login?: boolean;
  default_connector?: string;
  _local_login?: "local_login";
}

export interface ClusterInfo__Output {
  cluster_name: string;
  server_version: string;
  min_client_version: string;
  recommended_client_version: string;
  local_login?: boolean;
  default_connector: string;
  _local_login?: "local_login";
}
