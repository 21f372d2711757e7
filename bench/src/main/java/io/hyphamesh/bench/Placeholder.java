package io.hyphamesh.bench; public final class Placeholder {}
