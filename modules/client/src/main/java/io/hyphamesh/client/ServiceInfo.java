package io.hyphamesh.client;

import java.util.List;

/**
 * A service of the registry and its providers.
 *
 * @param service   service id
 * @param providers who provides it
 */
public record ServiceInfo(String service, List<Provider> providers) {

    /**
     * One provider.
     *
     * @param client     its client id
     * @param methods    the methods it offers (empty: any)
     * @param visibility {@code workspace} or {@code private}
     */
    public record Provider(String client, List<String> methods, String visibility) {
    }
}
