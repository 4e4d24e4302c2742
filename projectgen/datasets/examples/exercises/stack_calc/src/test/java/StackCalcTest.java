import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

public class StackCalcTest {

    @Test
    public void aSingleNumber() {
        assertThat(StackCalc.evaluate("7")).isEqualTo(7);
    }

    @Disabled("Remove to run test")
    @Test
    public void additionThenMultiplication() {
        assertThat(StackCalc.evaluate("3 4 + 2 *")).isEqualTo(14);
    }

    @Disabled("Remove to run test")
    @Test
    public void subtractionKeepsTheOrder() {
        assertThat(StackCalc.evaluate("10 4 -")).isEqualTo(6);
    }

    @Disabled("Remove to run test")
    @Test
    public void anOperatorWithoutTwoValuesIsRefused() {
        assertThatThrownBy(() -> StackCalc.evaluate("1 +")).isInstanceOf(IllegalArgumentException.class);
    }
}
