"""armbench: does a typed query tool help an LLM agent, compared with browsing the same data?"""
